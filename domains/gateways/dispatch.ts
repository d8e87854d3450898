/**
 * The dispatch port: a workflow step or a task run handed to an external
 * engine instead of running locally. Each dispatch is stored (`pending`,
 * `running`, then `succeeded` or `failed`) with the engine's ref. A temporal
 * dispatch polls the workflow on the runtime clock until it closes; a webhook
 * dispatch waits for the receiver's signed callback
 * (`POST /gateways/callbacks/:dispatch_id`, `settleCallback`).
 *
 * Dispatching the same run and step again (after a restart: a workflow's
 * gateway step resumes, a task run dispatched when the service stopped is
 * picked up at start) resumes the stored dispatch instead of starting new
 * work: a Temporal workflow is polled again, a webhook callback is still
 * accepted and completes it.
 *
 * An engine that is down (connection refused, 5xx, timeout, or its last
 * probe `down` and still down when probed again) answers 503
 * `sidecar_unavailable`; the dispatch is then stored as failed.
 *
 * `cancel` stores an open dispatch `cancelled` (its caller hears `cancelled`,
 * polling stops) and asks the engine to stop the work when it can (Temporal:
 * RequestCancelWorkflowExecution; a webhook receiver is not told).
 *
 * At shutdown (`stop`) polling and waiting end without settling anything:
 * dispatches in flight stay `pending` or `running` in the store for the next
 * start to resume, and their callers (a task run, a workflow step) are never
 * answered by this process.
 */
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { isoAt } from '../../runtime/clock.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
import type { GatewayDispatchDoc, GatewayDoc } from './documents.js';
import { EngineDownError, type Outcome } from './engines.js';
import type { GatewayService } from './service.js';
import type { GatewayDispatch } from '../orchestrator/gateway-port.js';
import { outcomeSchema, verifyCallback } from './webhook-engine.js';

/** first poll of a running workflow after this; doubling up to POLL_MAX_MS */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 5_000;
/** consecutive failed polls before the engine counts as down */
const POLL_FAILURES = 3;
/** @default 1 hour: a dispatch still open then fails with `timeout` (context `timeout_secs` overrides) */
const DEFAULT_TIMEOUT_SECS = 3_600;
const MAX_TIMEOUT_SECS = 7 * 86_400;

interface Waiter {
  settled(dispatch: GatewayDispatchDoc): void;
  /** shutdown: its timer cleared, never answered */
  abandon(): void;
}

/** what a dispatch answers once the dispatcher stopped: nothing, ever (the next process resumes it) */
const abandoned = <T>(): Promise<T> => new Promise<T>(() => undefined);

export class GatewayDispatcher implements GatewayDispatch {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** dispatches between their call and their stored record (by org, run and step): a cancel then marks them */
  private readonly starting = new Map<string, { cancelled: boolean }>();
  private stopped = false;

  constructor(
    private readonly collections: Collections,
    private readonly gateways: GatewayService,
    /** the absolute base of callback URLs (PUBLIC_URL, else the listening address), without `/api/v1` */
    private readonly publicBase: () => string,
  ) {}

  async dispatch(orgId: string, ref: string | null, request: { workflow_run_id: string; step_id: string; input: Record<string, unknown> }): Promise<Outcome> {
    if (this.stopped) return abandoned();
    const org = asOrgId(orgId);
    const key = startingKey(org, request);
    const starting = { cancelled: false };
    this.starting.set(key, starting);
    const release = (): void => {
      if (this.starting.get(key) === starting) this.starting.delete(key);
    };
    let gateway: GatewayDoc;
    let record: GatewayDispatchDoc;
    try {
      // the same run and step dispatched again (a restart): the earlier dispatch is resumed, or its outcome answered
      const earlier = await this.collections.gatewayDispatches.findOne(org, { workflow_run_id: request.workflow_run_id, step_id: request.step_id });
      if (earlier) {
        release();
        if (starting.cancelled) await this.cancel(orgId, request);
        return await this.resume(org, (await this.collections.gatewayDispatches.get(org, earlier.id)) ?? earlier, request);
      }
      gateway = await this.usable(org, await this.gateways.resolve(org, ref));
      record = await this.collections.gatewayDispatches.insert(org, {
        id: newId('gdp'),
        gateway_id: gateway.id,
        status: 'pending',
        workflow_run_id: request.workflow_run_id,
        step_id: request.step_id,
        external_ref: null,
        output: null,
        error: null,
        finished_at: null,
      });
    } finally {
      release();
    }
    // cancelled before it was stored: the engine never hears of it
    if (starting.cancelled) return present(await this.settle(org, record.id, CANCELLED));
    return this.startAndWait(org, gateway, record, request);
  }

  /** Cancels the open dispatch of this run and step; false when there is none or it already ended. */
  async cancel(orgId: string, request: { workflow_run_id: string; step_id: string }): Promise<boolean> {
    const org = asOrgId(orgId);
    const starting = this.starting.get(startingKey(org, request));
    if (starting) {
      starting.cancelled = true;
      return true;
    }
    const record = await this.collections.gatewayDispatches.findOne(org, { workflow_run_id: request.workflow_run_id, step_id: request.step_id });
    if (!record || (record.status !== 'pending' && record.status !== 'running')) return false;
    await this.settle(org, record.id, CANCELLED);
    const gateway = await this.collections.gateways.get(org, record.gateway_id);
    if (gateway !== null && record.external_ref !== null) await this.stopEngineWork(org, gateway, record.id, record.external_ref);
    return true;
  }

  /** asks the engine to stop work nobody waits for any more (cancelled, timed out); best effort: its answer changes nothing here */
  private async stopEngineWork(org: OrgId, gateway: GatewayDoc, dispatchId: string, externalRef: string): Promise<void> {
    const engine = this.gateways.engines[gateway.engine_type];
    await engine.cancel?.(gateway, this.gateways.apiKey(org, gateway), externalRef, dispatchId).catch(() => undefined);
  }

  /**
   * 503 `sidecar_unavailable` when the gateway `ref` names was probed down and
   * is still down when probed again (a manual task run asks before it creates
   * anything). An unknown gateway passes: the dispatch itself fails clearly.
   */
  async requireAvailable(orgId: string, ref: string | null): Promise<void> {
    const org = asOrgId(orgId);
    const gateway = await this.gateways.resolve(org, ref).catch((error: unknown) => {
      if (error instanceof ServiceError && error.code === 'not_found') return null;
      throw error;
    });
    if (gateway !== null) await this.usable(org, gateway);
  }

  /** the gateway, unless probed down and still down when probed again (503) */
  private async usable(org: OrgId, gateway: GatewayDoc): Promise<GatewayDoc> {
    if (gateway.last_health_status !== 'down') return gateway;
    // probed down: look again before refusing, so a recovered engine is used at once
    const probed = await this.gateways.probe(org, gateway);
    if (probed.last_health_status === 'down') throw this.unavailable(probed, probed.last_health_error ?? 'down');
    return probed;
  }

  /**
   * A dispatch an earlier process made for the same run and step: settled, its
   * outcome; started (`running` with the engine's ref), waited for again
   * (Temporal is polled, a webhook receiver's callback is still taken);
   * `pending` (the process stopped while starting it), started again with
   * the same dispatch id, which the engines take as the same work.
   */
  private async resume(org: OrgId, record: GatewayDispatchDoc, request: { input: Record<string, unknown> }): Promise<Outcome> {
    if (record.status !== 'pending' && record.status !== 'running') return present(record);
    const gateway = await this.collections.gateways.get(org, record.gateway_id);
    if (!gateway) return present(await this.settle(org, record.id, { status: 'failed', output: null, error: 'the gateway was deleted' }));
    const left = Math.max(1, Date.parse(record.created_at) + timeoutMs(gateway) - this.gateways.clock.now());
    if (record.status === 'pending' || record.external_ref === null) return this.startAndWait(org, gateway, record, { ...record, ...request }, left);
    const settled = this.waitFor(record.id, left);
    return this.awaitOutcome(org, gateway, this.gateways.apiKey(org, gateway), record.id, record.external_ref, settled);
  }

  private async startAndWait(
    org: OrgId,
    gateway: GatewayDoc,
    record: GatewayDispatchDoc,
    request: { workflow_run_id: string; step_id: string; input: Record<string, unknown> },
    waitMs = timeoutMs(gateway),
  ): Promise<Outcome> {
    const { clock } = this.gateways;
    const engine = this.gateways.engines[gateway.engine_type];
    const apiKey = this.gateways.apiKey(org, gateway);
    // listen before starting: a fast receiver may call back before the POST is answered
    const settled = this.waitFor(record.id, waitMs);
    let started;
    try {
      started = await engine.start(gateway, apiKey, {
        dispatchId: record.id,
        workflowRunId: request.workflow_run_id,
        stepId: request.step_id,
        input: request.input,
        callbackUrl: `${this.publicBase()}/api/v1/gateways/callbacks/${record.id}`,
        nowMs: clock.now(),
      });
    } catch (error) {
      // a start the shutdown interrupted stays pending: the next process starts it again with the same id
      if (this.stopped) return abandoned();
      const message = error instanceof EngineDownError ? error.message : error instanceof ServiceError ? `${error.code}: ${error.message}` : 'dispatch failed';
      await this.settle(org, record.id, { status: 'failed', output: null, error: message });
      settled.cancel();
      if (error instanceof EngineDownError) {
        await this.collections.gateways.update(org, gateway.id, { last_health_status: 'down', last_health_at: isoAt(clock.now()), last_health_error: message });
        throw this.unavailable(gateway, message);
      }
      throw error;
    }
    if (started.kind === 'settled') {
      settled.cancel();
      return present(await this.settle(org, record.id, started.outcome));
    }
    // a fast receiver's callback may have settled it already
    const current = await this.collections.gatewayDispatches.get(org, record.id);
    if (current?.status === 'pending')
      await this.collections.gatewayDispatches.update(org, record.id, { status: 'running', external_ref: started.externalRef });
    return this.awaitOutcome(org, gateway, apiKey, record.id, started.externalRef, settled);
  }

  /** A started dispatch: polled when its engine polls, else settled by its callback; `timeout` when `settled` gives up first. */
  private async awaitOutcome(
    org: OrgId,
    gateway: GatewayDoc,
    apiKey: string | null,
    dispatchId: string,
    externalRef: string,
    settled: { promise: Promise<GatewayDispatchDoc | null>; cancel: () => void },
  ): Promise<Outcome> {
    if (this.gateways.engines[gateway.engine_type].poll) {
      const polling = this.pollUntilDone(org, gateway, apiKey, dispatchId, externalRef);
      polling.catch(() => undefined);
      const outcome = await Promise.race([polling, settled.promise.then((doc) => (doc === null ? null : present(doc)))]);
      settled.cancel();
      if (outcome === null) {
        const timedOut = present(await this.settle(org, dispatchId, { status: 'failed', output: null, error: 'timeout' }));
        await this.stopEngineWork(org, gateway, dispatchId, externalRef);
        return timedOut;
      }
      return outcome;
    }
    const done = await settled.promise;
    if (done === null) return present(await this.settle(org, dispatchId, { status: 'failed', output: null, error: 'timeout' }));
    return present(done);
  }

  /** polls on the runtime clock; a run of failed polls marks the engine down (503) */
  private async pollUntilDone(org: OrgId, gateway: GatewayDoc, apiKey: string | null, dispatchId: string, externalRef: string): Promise<Outcome> {
    const engine = this.gateways.engines[gateway.engine_type];
    let delay = POLL_FIRST_MS;
    let failures = 0;
    for (;;) {
      await this.sleep(delay);
      if (this.stopped) return abandoned();
      delay = Math.min(delay * 2, POLL_MAX_MS);
      const current = await this.collections.gatewayDispatches.get(org, dispatchId);
      if (!current || (current.status !== 'pending' && current.status !== 'running'))
        return current ? present(current) : { status: 'failed', output: null, error: 'dispatch gone' };
      try {
        const outcome = await engine.poll!(gateway, apiKey, externalRef);
        failures = 0;
        if (outcome !== null) return present(await this.settle(org, dispatchId, outcome));
      } catch (error) {
        if (this.stopped) return abandoned();
        if (!(error instanceof EngineDownError)) throw error;
        failures += 1;
        if (failures >= POLL_FAILURES) {
          await this.settle(org, dispatchId, { status: 'failed', output: null, error: error.message });
          throw this.unavailable(gateway, error.message);
        }
      }
    }
  }

  /**
   * Shutdown: no poll, start or timeout settles a dispatch from now on, and
   * no new one begins; what was in flight stays as stored for the next start.
   */
  stop(): Promise<void> {
    this.stopped = true;
    for (const waiters of [...this.waiters.values()]) for (const waiter of [...waiters]) waiter.abandon();
    return Promise.resolve();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => unref(this.gateways.clock.setTimeout(resolve, ms)));
  }

  /** Stores the outcome (once) and wakes whoever waits on it. */
  private async settle(org: OrgId, dispatchId: string, outcome: Outcome): Promise<GatewayDispatchDoc> {
    // an outcome reached while stopping is left to the next process, which reads it from the engine again
    if (this.stopped) return abandoned();
    const updated = await this.collections.gatewayDispatches.update(org, dispatchId, {
      status: outcome.status,
      output: outcome.output,
      error: outcome.error ?? null,
      finished_at: isoAt(this.gateways.clock.now()),
    });
    if (!updated) throw new ServiceError('not_found', `dispatch ${dispatchId} not found`);
    for (const waiter of [...(this.waiters.get(dispatchId) ?? [])]) waiter.settled(updated);
    return updated;
  }

  /** resolves with the settled dispatch, or null when `timeoutMs` passes on the runtime clock first */
  private waitFor(dispatchId: string, timeoutMs: number): { promise: Promise<GatewayDispatchDoc | null>; cancel: () => void } {
    if (this.stopped) return { promise: abandoned(), cancel: () => undefined };
    const { clock } = this.gateways;
    const waiters = this.waiters.get(dispatchId) ?? new Set<Waiter>();
    this.waiters.set(dispatchId, waiters);
    let timer: unknown = null;
    let answer: (doc: GatewayDispatchDoc | null) => void = () => undefined;
    const forget = (): void => {
      clock.clearTimeout(timer);
      waiters.delete(waiter);
      if (waiters.size === 0 && this.waiters.get(dispatchId) === waiters) this.waiters.delete(dispatchId);
    };
    const finish = (doc: GatewayDispatchDoc | null): void => {
      forget();
      answer(doc);
    };
    const waiter: Waiter = { settled: finish, abandon: forget };
    const promise = new Promise<GatewayDispatchDoc | null>((resolve) => {
      answer = resolve;
      timer = unref(clock.setTimeout(() => finish(null), timeoutMs));
    });
    waiters.add(waiter);
    return { promise, cancel: () => finish(null) };
  }

  /**
   * A webhook engine's completion: `POST /gateways/callbacks/:dispatch_id`.
   * 404 unknown dispatch; 401 missing or bad signature (the gateway's key,
   * Standard Webhooks); 409 when the dispatch is already settled (a replay).
   */
  async settleCallback(dispatchId: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Uint8Array): Promise<GatewayDispatchDoc> {
    const [found] = await this.collections.gatewayDispatches.findAcrossOrgs({ id: dispatchId }, 1);
    if (!found) throw new ServiceError('not_found', `dispatch ${dispatchId} not found`);
    const org = found.org_id;
    const gateway = await this.collections.gateways.get(org, found.gateway_id);
    const secret = gateway === null ? null : this.gateways.apiKey(org, gateway);
    if (gateway === null || gateway.engine_type !== 'webhook' || secret === null) throw new ServiceError('not_found', `dispatch ${dispatchId} not found`);
    if (!verifyCallback(secret, headers, rawBody, this.gateways.clock.now())) {
      throw new ServiceError(
        'bad_signature',
        'webhook-id, webhook-timestamp or webhook-signature is missing or stale, or no v1 signature matches the gateway api_key',
      );
    }
    if (found.status !== 'pending' && found.status !== 'running') throw new ServiceError('conflict', `dispatch ${dispatchId} is already ${found.status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(rawBody).toString('utf8')) as unknown;
    } catch {
      throw new ServiceError('invalid_json', 'the callback body is not valid JSON');
    }
    const outcome = outcomeSchema.safeParse(parsed);
    if (!outcome.success) {
      throw new ServiceError('validation_error', 'invalid body: expected {status: succeeded|failed, output?, error?}', {
        issues: outcome.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
      });
    }
    return this.settle(org, dispatchId, outcome.data);
  }

  private unavailable(gateway: GatewayDoc, why: string): ServiceError {
    return new ServiceError('sidecar_unavailable', `gateway ${gateway.name} (${gateway.engine_type}) is unavailable: ${why}`, { gateway_id: gateway.id });
  }
}

const CANCELLED: Outcome = { status: 'cancelled', output: null, error: 'cancelled' };

const startingKey = (org: OrgId, request: { workflow_run_id: string; step_id: string }): string => `${org}/${request.workflow_run_id}/${request.step_id}`;

/** a pending wait never keeps the process alive */
function unref(timer: unknown): unknown {
  (timer as { unref?: () => void } | null)?.unref?.();
  return timer;
}

function timeoutMs(gateway: GatewayDoc): number {
  const given = gateway.context['timeout_secs'];
  const secs = typeof given === 'number' && Number.isFinite(given) && given > 0 ? Math.min(given, MAX_TIMEOUT_SECS) : DEFAULT_TIMEOUT_SECS;
  return secs * 1000;
}

const present = (doc: GatewayDispatchDoc | Outcome): Outcome => ({
  status: doc.status === 'succeeded' || doc.status === 'cancelled' ? doc.status : 'failed',
  output: doc.output,
  ...(doc.error === null || doc.error === undefined ? {} : { error: doc.error }),
});
