/**
 * Parked runs: a run that waits for an approval (or for a tool result or a
 * model turn handed over, deferred-calls.ts, turn-runner.ts) and stays idle for
 * `AGENT_PARK_AFTER_MS` is persisted (`parked_runs`: the machine's context at
 * the wait, its request's data, its deadlines, the site that can rebuild the
 * rest), its actor is stopped and everything the runtime held of it is
 * dropped but one small index entry (run id -> organization, approval id,
 * next deadline). An answer, a cancel or a deadline brings it back: its site's
 * resumer rebuilds the provider, tools and end handler, its transcript is
 * read back into a feed, and a new actor starts from the stored context in the
 * machine's `active.parked` state, where the event is delivered.
 *
 * One sweep on the runtime clock (not a timer per run) parks the idle waits
 * and fires the deadlines of parked runs. Only runs whose request names a
 * `resume` site with a registered resumer are parked; the others wait live.
 * A parked run survives a restart: recovery leaves it (`parked_at` is set)
 * and `restore()` reads the index back.
 */
import type { Logger } from 'pino';
import { deferredWaitOf, replyText } from '../../actors/agent-run.context.js';
import type { AgentRunContext, AgentRunEvent, DeferredWait } from '../../actors/agent-run.types.js';
import type { ChatMessage } from '../llm/types.js';
import type { AgentRunDoc, ParkedRunDoc, PlatformCollections as Collections } from '../collections.js';
import type { RuntimeClock } from '../clock.js';
import type { OrgId } from '../store/types.js';
import type { LiveRun, StartRunRequest } from './live-run.js';
import { RunFeed } from './run-feed.js';

/**
 * What a site rebuilds of a parked run: the parts of its request that are not
 * data, and what the site watches on the run's feed again once it is back
 * (`revived`, called with the feed before the event that brought it back).
 */
export type RunSurroundings = Pick<StartRunRequest, 'provider' | 'endpoint' | 'sources' | 'interceptors' | 'onEnd'> & {
  readonly revived?: (feed: RunFeed) => void;
};

/** Rebuilds a parked run's surroundings from its record and the data its site stored (`resume.data`). */
export type RunResumer = (org: OrgId, run: AgentRunDoc, data: Record<string, unknown>) => Promise<RunSurroundings>;

/** What a turn handed over needs of its run to be performed elsewhere (the endpoint's key is never stored: it is rebuilt). */
export interface AwaitedTurn {
  readonly request: Pick<StartRunRequest, 'provider' | 'endpoint' | 'model' | 'temperature'>;
  readonly messages: readonly ChatMessage[];
}

/** The request fields kept in the parked record (the rest is in the machine's context or rebuilt). */
const REQUEST_FIELDS = [
  'userId',
  'kind',
  'conversationId',
  'messageId',
  'taskId',
  'bindingId',
  'input',
  'model',
  'temperature',
  'realm',
  'approvalWrite',
  'approvalTimeoutMs',
  'maxTurns',
  'timeoutMs',
  'costCapUsd',
  'spentTodayUsd',
] as const;

/** One parked run in memory: strings and numbers only. */
interface ParkedEntry {
  readonly org: string;
  /** the resumer that brings it back */
  readonly site: string;
  /** the approval it waits for, or null when it waits for a handed-over result or turn (`deferred`) */
  readonly approvalId: string | null;
  readonly deferred: DeferredWait | null;
  readonly approvalDue: number;
  readonly runDue: number;
}

/** What a run's context waits on, as one string (null: nothing): a park compares it before and after its writes. */
function waitKeyOf(context: AgentRunContext | null): string | null {
  if (!context) return null;
  const approvalId = context.current?.approvalId ?? null;
  if (approvalId !== null) return approvalId;
  const wait = deferredWaitOf(context);
  return wait ? `${wait.kind}:${wait.keys.join(',')}` : null;
}

/** What parking needs of the runtime. */
export interface ParkingHost {
  readonly collections: Collections;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly parkAfterMs: number;
  /** live runs and approval id -> run id, the runtime's own maps */
  readonly runs: Map<string, LiveRun>;
  readonly approvals: Map<string, string>;
  /** the live actor's context when it waits in `awaiting_approval`, `awaiting_result` or `awaiting_turn`, else null */
  waitingContext(runId: string): AgentRunContext | null;
  evict(runId: string): boolean;
  /** starts the actor of a run brought back, in `active.parked` */
  revive(request: StartRunRequest & { readonly runId: string }, feed: RunFeed, context: AgentRunContext, runDue: number): LiveRun;
  send(runId: string, event: AgentRunEvent): boolean;
  accepting(): boolean;
}

export class RunParking {
  private readonly parked = new Map<string, ParkedEntry>();
  /** feeds of parked runs somebody listens to (or asked for): reused when the run comes back */
  private readonly standby = new Map<string, RunFeed>();
  private readonly resumers = new Map<string, RunResumer>();
  private readonly reviving = new Map<string, Promise<boolean>>();
  private readonly parking = new Set<string>();
  /** live runs in an approval wait that may park */
  private readonly waitingRuns = new Set<LiveRun>();
  /** the earliest deadline of a parked run: sweeps before it skip the parked runs */
  private nextDue = Number.POSITIVE_INFINITY;
  private timer: unknown = null;

  constructor(private readonly host: ParkingHost) {}

  register(site: string, resumer: RunResumer): void {
    this.resumers.set(site, resumer);
  }

  get size(): number {
    return this.parked.size;
  }

  /** The organization of a parked run, when it is parked. */
  orgOf(runId: string): string | undefined {
    return this.parked.get(runId)?.org;
  }

  /** Whether `run` can be parked (its request names a site with a resumer). */
  parks(run: LiveRun): boolean {
    const site = run.request.resume?.site;
    return site !== undefined && this.resumers.has(site);
  }

  /** The handed-over result or turn a parked run waits for. */
  deferredOf(runId: string): DeferredWait | undefined {
    return this.parked.get(runId)?.deferred ?? undefined;
  }

  /** Every parked run waiting for a handed-over result or turn. */
  deferredWaits(): { org: OrgId; runId: string; wait: DeferredWait }[] {
    const waits: { org: OrgId; runId: string; wait: DeferredWait }[] = [];
    for (const [runId, entry] of this.parked) if (entry.deferred) waits.push({ org: entry.org as OrgId, runId, wait: entry.deferred });
    return waits;
  }

  /** The feed of a parked run somebody listens to, once its entries are loaded (never one made for the asking). */
  openFeed(runId: string): RunFeed | undefined {
    const feed = this.standby.get(runId);
    return feed?.loaded === true ? feed : undefined;
  }

  /**
   * At shutdown, before the runs stop: every run waiting for a handed-over result or turn parks at once (it comes
   * back after the restart), and the streams of parked runs end (their clients reconnect to the next process).
   */
  async parkForShutdown(): Promise<void> {
    const waits = [...this.waitingRuns].filter((run) => {
      const context = this.host.waitingContext(run.id);
      return !this.parking.has(run.id) && context !== null && deferredWaitOf(context) !== null;
    });
    await Promise.all(waits.map((run) => this.park(run)));
    for (const feed of this.standby.values()) feed.end();
    this.standby.clear();
  }

  /** A run began a wait (an approval, a handed-over result or turn): it may be parked once idle. */
  waiting(run: LiveRun): void {
    const site = run.request.resume?.site;
    if (site === undefined || !this.resumers.has(site)) return;
    run.waitingSince = this.host.clock.now();
    this.waitingRuns.add(run);
    this.schedule();
  }

  /** The feed of a parked run: its stored entries, then the live ones once it is back. */
  feed(runId: string): RunFeed | undefined {
    const entry = this.parked.get(runId);
    if (!entry) return undefined;
    let feed = this.standby.get(runId);
    if (!feed) {
      const { collections, logger, clock } = this.host;
      feed = RunFeed.restore(runId, entry.org as OrgId, collections.agentRunEvents, logger, () => clock.now());
      this.standby.set(runId, feed);
    }
    return feed;
  }

  /** Brings a parked run back and delivers `event`; false when it is not parked (or could not come back). */
  async deliver(runId: string, event: AgentRunEvent): Promise<boolean> {
    if (!this.parked.has(runId) && !this.reviving.has(runId)) return false;
    let revived = this.reviving.get(runId);
    if (!revived) {
      revived = this.revive(runId).finally(() => this.reviving.delete(runId));
      this.reviving.set(runId, revived);
    }
    return (await revived) && this.host.send(runId, event);
  }

  /**
   * What the turn parked run `runId` waits on (`key`) needs, without bringing the run back: its
   * conversation, model and the endpoint its site's resumer rebuilds (the organization's settings as
   * they are now); undefined when the run is not parked in this organization on that turn.
   */
  async awaitedTurn(org: OrgId, runId: string, key: string): Promise<AwaitedTurn | undefined> {
    const entry = this.parked.get(runId);
    const resumer = entry ? this.resumers.get(entry.site) : undefined;
    if (!entry || entry.org !== org || entry.deferred?.keys.includes(key) !== true || !resumer) return undefined;
    const { collections } = this.host;
    const [doc, record] = await Promise.all([collections.parkedRuns.get(org, runId), collections.agentRuns.get(org, runId)]);
    if (!doc || !record) return undefined;
    const { provider, endpoint } = await resumer(org, record, doc.site_data);
    const { model, temperature } = doc.request as { model: string; temperature?: number };
    const request = { provider, model, ...(endpoint === undefined ? {} : { endpoint }), ...(temperature === undefined ? {} : { temperature }) };
    return { request, messages: (doc.context as unknown as AgentRunContext).messages };
  }

  /** Reads the parked runs a previous process left (at start, after recovery). */
  async restore(): Promise<number> {
    const docs = await this.host.collections.parkedRuns.findAcrossOrgs({}, Number.MAX_SAFE_INTEGER);
    for (const doc of docs) {
      const deferred = deferredWaitOf(doc.context as unknown as AgentRunContext);
      const approvalId = doc.approval_id ?? null;
      this.parked.set(doc.id, { org: doc.org_id, site: doc.site, approvalId, deferred, approvalDue: doc.approval_deadline, runDue: doc.run_deadline });
      this.nextDue = Math.min(this.nextDue, doc.approval_deadline, doc.run_deadline);
      if (approvalId !== null) this.host.approvals.set(approvalId, doc.id);
    }
    if (docs.length > 0) this.schedule();
    return docs.length;
  }

  /** One timer for every run: the next sweep, while there is something to watch. */
  private schedule(): void {
    if (this.timer !== null) return;
    const interval = Math.max(10, Math.min(this.host.parkAfterMs, 1000));
    const timer = this.host.clock.setTimeout(() => {
      this.timer = null;
      this.sweep();
    }, interval);
    // a sweep never keeps the process alive
    (timer as { unref?: () => void } | null)?.unref?.();
    this.timer = timer;
  }

  private sweep(): void {
    if (!this.host.accepting()) return;
    const now = this.host.clock.now();
    for (const run of this.waitingRuns) {
      if (run.waitingSince === undefined || run.finished || this.host.runs.get(run.id) !== run) this.waitingRuns.delete(run);
      else if (now - run.waitingSince >= this.host.parkAfterMs && !this.parking.has(run.id)) void this.park(run);
    }
    if (now >= this.nextDue) {
      this.nextDue = Number.POSITIVE_INFINITY;
      for (const [runId, entry] of this.parked) {
        if (this.reviving.has(runId)) continue;
        // restored at start before every domain registered its resumer: its deadline waits for it
        if (!this.resumers.has(entry.site)) this.nextDue = Math.min(this.nextDue, now);
        else if (now >= entry.runDue) void this.fire(runId, { type: 'RUN_TIMEOUT' });
        else if (now >= entry.approvalDue) void this.fire(runId, { type: 'APPROVAL_TIMEOUT' });
        else this.nextDue = Math.min(this.nextDue, entry.approvalDue, entry.runDue);
      }
    }
    // a feed still writing stays: a feed restored meanwhile would not read its last entries
    for (const [runId, feed] of this.standby) if (feed.idle && !feed.writing && !this.reviving.has(runId)) this.standby.delete(runId);
    if (this.waitingRuns.size > 0 || this.parked.size > 0) this.schedule();
  }

  private async fire(runId: string, event: AgentRunEvent): Promise<void> {
    try {
      await this.deliver(runId, event);
    } catch (error) {
      this.host.logger.error({ err: error, run_id: runId }, 'agent run: a parked run could not come back for its deadline');
    }
  }

  private async park(run: LiveRun): Promise<void> {
    const { collections, clock } = this.host;
    const org = run.request.orgId;
    const context = this.host.waitingContext(run.id);
    const resume = run.request.resume;
    const waitKey = waitKeyOf(context);
    if (!context || !resume || waitKey === null || run.waitingSince === undefined) return;
    this.parking.add(run.id);
    try {
      // the wait's transcript entries and status are in the store first
      await run.feed.flushed();
      if (waitKeyOf(this.host.waitingContext(run.id)) !== waitKey) return;
      const { current } = context;
      const approvalId = current?.approvalId ?? null;
      const deferred = deferredWaitOf(context);
      const step = current?.step ? { ...current.step, resolved: undefined } : null;
      const request: Record<string, unknown> = {};
      for (const field of REQUEST_FIELDS) if (run.request[field] !== undefined) request[field] = run.request[field];
      const doc: Omit<ParkedRunDoc, 'created_at' | 'updated_at'> = {
        id: run.id,
        approval_id: approvalId,
        // a handed-over result or turn has no deadline of its own: the run's
        approval_deadline: approvalId === null ? run.runDue : run.waitingSince + context.approvalTimeoutMs,
        run_deadline: run.runDue,
        context: { ...context, current: current ? { ...current, step } : null },
        request,
        site: resume.site,
        site_data: resume.data,
      };
      await collections.parkedRuns.insert(org, doc);
      await collections.agentRuns.update(org, run.id, { parked_at: new Date(clock.now()).toISOString() });
      // an answer (or a cancel, a shutdown) may have come meanwhile: then the run stays live
      if (run.finished || waitKeyOf(this.host.waitingContext(run.id)) !== waitKey) {
        await collections.parkedRuns.delete(org, run.id);
        await collections.agentRuns.update(org, run.id, { parked_at: null });
        return;
      }
      this.parked.set(run.id, { org, site: resume.site, approvalId, deferred, approvalDue: doc.approval_deadline, runDue: doc.run_deadline });
      this.nextDue = Math.min(this.nextDue, doc.approval_deadline, doc.run_deadline);
      this.waitingRuns.delete(run);
      this.host.evict(run.id);
      this.host.runs.delete(run.id);
      // somebody is listening (or its last entries are still being written): the feed stays
      if (!run.feed.idle || run.feed.writing) this.standby.set(run.id, run.feed);
      this.schedule();
    } finally {
      this.parking.delete(run.id);
    }
  }

  private async revive(runId: string): Promise<boolean> {
    const entry = this.parked.get(runId);
    if (!entry) return this.host.runs.has(runId);
    const org = entry.org as OrgId;
    const { collections, clock } = this.host;
    const [doc, record] = await Promise.all([collections.parkedRuns.get(org, runId), collections.agentRuns.get(org, runId)]);
    const forget = (): void => {
      this.parked.delete(runId);
      this.standby.delete(runId);
      if (entry.approvalId !== null) this.host.approvals.delete(entry.approvalId);
    };
    // waiting for a handed-over result or turn, the run's record says `running`
    if (!doc || !record || (record.status !== 'awaiting_approval' && record.status !== 'running')) {
      forget();
      return false;
    }
    const resumer = this.resumers.get(doc.site);
    if (!resumer) throw new Error(`agent run ${runId}: no resumer for site "${doc.site}"`);
    const { revived, ...surroundings } = await resumer(org, record, doc.site_data);
    const feed = this.feed(runId) as RunFeed;
    await feed.ready;
    const request = {
      ...(doc.request as unknown as Omit<StartRunRequest, 'orgId' | 'provider' | 'messages'>),
      ...surroundings,
      runId,
      orgId: org,
      messages: [],
      timeoutMs: Math.max(1, doc.run_deadline - clock.now()),
      resume: { site: doc.site, data: doc.site_data },
    };
    this.parked.delete(runId);
    this.standby.delete(runId);
    const run = this.host.revive(request, feed, doc.context as unknown as AgentRunContext, doc.run_deadline);
    run.text = replyText(doc.context as unknown as AgentRunContext);
    if (entry.approvalId !== null) run.approvalIds.add(entry.approvalId);
    revived?.(run.feed);
    run.feed.enqueue(async () => {
      await collections.parkedRuns.delete(org, runId);
      await collections.agentRuns.update(org, runId, { parked_at: null });
    });
    return true;
  }
}
