/**
 * The transcript of one live run: every entry gets the next `seq`, is kept in
 * memory for the run's live listeners (SSE streams, reconnects) and is
 * appended to `agent_run_events` in order, as it happens. Writes of one run go
 * through one queue, so the store sees them in `seq` order and a status
 * update queued after an event lands after it.
 */
import type { Logger } from 'pino';
import type { AgentRunEventDoc } from '../collections.js';
import type { OrgCollection, OrgId } from '../store/types.js';

export interface TranscriptEvent {
  readonly seq: number;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly at: string;
}

export interface FeedListener {
  event(entry: TranscriptEvent): void;
  /** the run ended: no more events */
  end(): void;
}

/**
 * `rev_<run ulid>_<seq, 8 digits>`: derived, not drawn, so ids sort by run
 * then seq and a transcript write costs no random id (the hot path of a turn).
 */
export const eventId = (runId: string, seq: number): string => `rev_${runId.slice(runId.indexOf('_') + 1)}_${String(seq).padStart(8, '0')}`;

const PAGE = 1000;

/**
 * A run's stored entries in `seq` order, read by id range (event ids are
 * `rev_<run ulid>_<seq>`): the store walks the run's own ids, never the organization's.
 */
async function storedEvents(store: OrgCollection<AgentRunEventDoc>, orgId: OrgId, runId: string): Promise<AgentRunEventDoc[]> {
  const idRange = { gte: eventId(runId, 0), lt: `${eventId(runId, 0).slice(0, -8)}~` };
  const out: AgentRunEventDoc[] = [];
  for (let after: string | null = null; ;) {
    const page = await store.list(orgId, { filter: { run_id: runId }, limit: PAGE, after, idRange });
    out.push(...page.items);
    if (page.items.length < PAGE) return out.sort((a, b) => a.seq - b.seq);
    after = page.items.at(-1)?.id ?? null;
  }
}

export class RunFeed {
  private readonly events: TranscriptEvent[] = [];
  private readonly listeners = new Set<FeedListener>();
  private seq = 0;
  private readonly queue: (() => Promise<unknown>)[] = [];
  private draining: Promise<void> | null = null;
  /** a parked run's feed loading its stored entries: subscribers wait for them */
  private loading: Promise<void> | null = null;
  private readonly waiting: { afterSeq: number; listener: FeedListener; gone: boolean }[] = [];
  ended = false;

  constructor(
    readonly runId: string,
    readonly orgId: OrgId,
    private readonly store: OrgCollection<AgentRunEventDoc>,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * The feed of a run that was parked: its entries so far come from the store
   * (`ready` resolves once they are in), new ones continue their `seq`.
   */
  static restore(runId: string, orgId: OrgId, store: OrgCollection<AgentRunEventDoc>, logger: Logger, now: () => number): RunFeed {
    const feed = new RunFeed(runId, orgId, store, logger, now);
    feed.loading = storedEvents(store, orgId, runId).then((docs) => {
      for (const doc of docs) feed.events.push({ seq: doc.seq, type: doc.type, data: doc.data, at: doc.at });
      feed.seq = feed.events.at(-1)?.seq ?? 0;
      feed.loading = null;
      for (const wait of feed.waiting.splice(0)) if (!wait.gone) feed.subscribe(wait.afterSeq, wait.listener);
    });
    return feed;
  }

  /** Resolves once a restored feed has its stored entries (at once for any other). */
  get ready(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  /** Its stored entries are in (always, but for a parked run's feed still loading them). */
  get loaded(): boolean {
    return this.loading === null;
  }

  /** The seq of the last entry so far (a listener subscribing after it gets only what comes next). */
  get lastSeq(): number {
    return this.seq;
  }

  /** No listener is attached (a parked run's feed may then be dropped). */
  get idle(): boolean {
    return this.listeners.size === 0 && this.waiting.length === 0;
  }

  /** Writes are queued or under way (a feed restored now would miss them). */
  get writing(): boolean {
    return this.draining !== null;
  }

  /** Records an entry: persisted in order, delivered to listeners now. */
  append(type: string, data: Record<string, unknown>, approvalId: string | null = null): TranscriptEvent {
    if (this.ended) throw new Error(`run ${this.runId}: transcript already closed`);
    this.seq += 1;
    const entry: TranscriptEvent = { seq: this.seq, type, data, at: new Date(this.now()).toISOString() };
    this.events.push(entry);
    this.enqueue(() =>
      this.store
        .insert(this.orgId, { id: eventId(this.runId, entry.seq), run_id: this.runId, seq: entry.seq, type, data, approval_id: approvalId, at: entry.at })
        .then(() => undefined),
    );
    for (const listener of this.listeners) listener.event(entry);
    return entry;
  }

  /**
   * Queues a store write behind the writes already queued; a failed write is
   * logged, never thrown. The queue starts draining on the next turn of the
   * event loop (setImmediate): the run's own step finishes first, so the next
   * model request goes out before the store work instead of after it.
   */
  enqueue(write: () => Promise<unknown>): void {
    this.queue.push(write);
    this.draining ??= this.drain();
  }

  /** Resolves once every write queued so far is done. */
  flushed(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let write = this.queue.shift(); write !== undefined; write = this.queue.shift()) {
      try {
        await write();
      } catch (error) {
        this.logger.error({ err: error, run_id: this.runId }, 'agent run: transcript write failed');
      }
    }
    this.draining = null;
  }

  /** No more entries: listeners are ended. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const listener of [...this.listeners]) listener.end();
    this.listeners.clear();
  }

  /**
   * Replays the entries after `afterSeq`, then delivers new ones live (or ends
   * at once when the run is over). Returns the unsubscribe function.
   */
  subscribe(afterSeq: number, listener: FeedListener): () => void {
    if (this.loading) {
      const wait = { afterSeq, listener, gone: false };
      this.waiting.push(wait);
      let unsubscribe: (() => void) | null = null;
      void this.loading.then(() => {
        if (!wait.gone) unsubscribe = () => this.listeners.delete(listener);
      });
      return () => {
        wait.gone = true;
        this.waiting.splice(this.waiting.indexOf(wait) >>> 0, 1);
        unsubscribe?.();
      };
    }
    for (const entry of this.events) if (entry.seq > afterSeq) listener.event(entry);
    if (this.ended) {
      listener.end();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
