/**
 * The outbound delivery queue. A delivery is stored (`queued`) before its
 * first attempt, then driven by a `webhook_delivery` actor under the
 * supervisor: each attempt is signed, sent, and appended to the delivery's
 * log (status, latency, error); failures retry with exponential backoff and
 * jitter up to the webhook's `retries`. At start, deliveries a previous
 * process left `queued` or `in_flight` are resumed, so nothing accepted is
 * lost; an attempt cut by a crash may be repeated (at-least-once: receivers
 * deduplicate on `webhook-id`).
 */
import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import { retryAfterMs } from '../../runtime/net/retry-after.js';
import type { Collections } from '../collections.js';
import type { OutboundWebhookDoc, WebhookAttempt, WebhookDeliveryDoc } from './documents.js';
import { newId, nowIso } from '../../runtime/ids.js';
import { egressRefusalOf, type EgressGuard } from '../../runtime/net/egress.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
import { SupervisorClosedError, type KindHandle, type Supervisor } from '../../runtime/supervisor.js';
import { retryDelayMs } from './backoff.js';
import { deliveryMachine, type AttemptOutcome, type DeliveryActorInput, type DeliveryRef } from '../../actors/webhook-delivery.machine.js';
import type { WebhookSecrets } from './secrets.js';
import { reportDelivery } from '../activity/deliveries.js';
import type { ActivityRecorder } from '../activity/record.js';
import { signatureHeaders } from './signing.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';

const DELIVERY_ACTOR_KIND = 'webhook_delivery';
/** one attempt waits at most this long for the receiver's answer */
const ATTEMPT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'agent-context-service-webhooks/1';
const RESUME_BATCH = 500;

export interface DispatcherOptions {
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  readonly secrets: WebhookSecrets;
  readonly logger: Logger;
  /** first retry delay (WEBHOOK_RETRY_BASE_MS) */
  readonly retryBaseMs: number;
  readonly attemptTimeoutMs?: number;
  /** every delivery goes through it: receivers are tenant-chosen URLs */
  readonly egress: EgressGuard;
  /** settled deliveries (delivered, failed for good) go to the activity feed */
  readonly activity?: ActivityRecorder;
}

export interface EnqueueRequest {
  readonly webhook: OutboundWebhookDoc;
  readonly event: string;
  /** sent as JSON, byte for byte as stored */
  readonly payload: unknown;
  readonly runId: string | null;
  readonly createdBy: string;
}

type AttemptListener = (delivery: WebhookDeliveryDoc) => void;

export class WebhookDispatcher {
  private readonly listeners = new Map<string, Set<AttemptListener>>();

  readonly egress: EgressGuard;
  /** the runtime clock: backoff due times, secret overlap, signature timestamps */
  readonly clock: Pick<RuntimeClock, 'now'>;
  private readonly actors: KindHandle<typeof deliveryMachine>;

  constructor(private readonly options: DispatcherOptions) {
    this.egress = options.egress;
    this.clock = options.supervisor.clock;
    const logic = deliveryMachine.provide({
      actors: { attempt: fromPromise<AttemptOutcome, DeliveryRef>(({ input, signal }) => this.attempt(input, signal)) },
    });
    this.actors = options.supervisor.registerKind({
      kind: DELIVERY_ACTOR_KIND,
      logic,
      // a store hiccup: start over from the stored state (attempts already made are in the log)
      policy: { onFailure: 'restart', maxRestarts: 3 },
      shutdownEvent: { type: 'PARK' },
    });
  }

  /** Resumes what a previous process left queued or in flight. Call once at start. */
  async resume(): Promise<number> {
    const { webhookDeliveries } = this.options.collections;
    let resumed = 0;
    let pending = await webhookDeliveries.findAcrossOrgs({ status: { in: ['queued', 'in_flight'] } }, RESUME_BATCH);
    // findAcrossOrgs has no cursor: resumed deliveries keep their status, so page by excluding those already spawned
    const seen = new Set<string>();
    while (pending.length > 0) {
      const fresh = pending.filter((delivery) => !seen.has(delivery.id));
      if (fresh.length === 0) break;
      for (const delivery of fresh) {
        seen.add(delivery.id);
        const dueIn = delivery.next_attempt_at === null ? 0 : Date.parse(delivery.next_attempt_at) - this.clock.now();
        if (this.spawn({ orgId: delivery.org_id, deliveryId: delivery.id, firstDelayMs: Math.max(0, dueIn) })) resumed += 1;
      }
      if (pending.length < RESUME_BATCH) break;
      pending = await webhookDeliveries.findAcrossOrgs({ status: { in: ['queued', 'in_flight'] } }, RESUME_BATCH + seen.size);
    }
    if (resumed > 0) this.options.logger.info({ deliveries: resumed }, 'outbound webhook deliveries resumed');
    return resumed;
  }

  /**
   * Stores a delivery and starts sending it. Answers the stored delivery at
   * once (`queued`), or with `waitMs` after its first attempt is logged (or
   * when the wait ends first; sending goes on in the background).
   */
  async enqueue(org: OrgId, request: EnqueueRequest, waitMs = 0): Promise<WebhookDeliveryDoc> {
    const delivery = await this.options.collections.webhookDeliveries.insert(org, {
      id: newId('owd'),
      webhook_id: request.webhook.id,
      event: request.event,
      body: JSON.stringify(request.payload),
      status: 'queued',
      attempts: [],
      max_attempts: request.webhook.retries + 1,
      next_attempt_at: null,
      finished_at: null,
      run_id: request.runId,
      created_by: request.createdBy,
    });
    // listen before the actor starts, so a fast first attempt is not missed
    const attempted = waitMs > 0 ? this.nextAttempt(delivery.id, waitMs) : Promise.resolve(null);
    // shutting down: it stays queued for the next start, nothing to wait for
    if (!this.spawn({ orgId: org, deliveryId: delivery.id, firstDelayMs: 0 })) return delivery;
    return (await attempted) ?? delivery;
  }

  /**
   * The delivery after its next attempt is logged, or null when none is
   * logged within `timeoutMs` (it keeps going in the background).
   */
  nextAttempt(deliveryId: string, timeoutMs: number): Promise<WebhookDeliveryDoc | null> {
    return new Promise((resolve) => {
      const listeners = this.listeners.get(deliveryId) ?? new Set<AttemptListener>();
      this.listeners.set(deliveryId, listeners);
      const done = (delivery: WebhookDeliveryDoc | null): void => {
        clearTimeout(timer);
        listeners.delete(listener);
        if (listeners.size === 0) this.listeners.delete(deliveryId);
        resolve(delivery);
      };
      const listener: AttemptListener = (delivery) => done(delivery);
      const timer = setTimeout(() => done(null), timeoutMs);
      listeners.add(listener);
    });
  }

  /** false when the runtime is shutting down: the delivery stays queued for the next start */
  private spawn(input: DeliveryActorInput): boolean {
    try {
      this.actors.spawn({ id: input.deliveryId, input, orgId: input.orgId });
      return true;
    } catch (error) {
      if (error instanceof SupervisorClosedError) return false;
      throw error;
    }
  }

  /**
   * One attempt: sign, POST, log it, decide what comes next. `stopped` aborts
   * when the actor is stopped (shutdown grace over): the attempt is then left
   * unlogged and the delivery `in_flight`, for the next start to send again.
   */
  private async attempt({ orgId, deliveryId }: DeliveryRef, stopped: AbortSignal): Promise<AttemptOutcome> {
    const org = asOrgId(orgId);
    const { webhookDeliveries, outboundWebhooks } = this.options.collections;
    const delivery = await webhookDeliveries.get(org, deliveryId);
    if (!delivery || delivery.status === 'delivered' || delivery.status === 'failed') return { done: true, retryInMs: 0 };
    const webhook = await outboundWebhooks.get(org, delivery.webhook_id);
    if (!webhook) {
      await this.settle(org, delivery, { status: 'failed', finished_at: nowIso(), next_attempt_at: null }, null);
      return { done: true, retryInMs: 0 };
    }
    await webhookDeliveries.update(org, delivery.id, { status: 'in_flight' });

    const n = delivery.attempts.length + 1;
    const { answer, latencyMs } = await this.post(org, webhook, delivery, stopped);
    if (stopped.aborted) return { done: true, retryInMs: 0 };
    const attempt: WebhookAttempt = { n, at: nowIso(), status: answer.status, latency_ms: latencyMs, error: answer.error };
    this.options.logger.info(
      { delivery: delivery.id, webhook: webhook.id, attempt: n, status: answer.status, latency_ms: latencyMs, error: answer.error },
      'outbound webhook attempt',
    );
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    if (ok) {
      await this.settle(org, delivery, { status: 'delivered', finished_at: attempt.at, next_attempt_at: null }, attempt, webhook);
      return { done: true, retryInMs: 0 };
    }
    // a refused address stays refused: retrying would only repeat the refusal
    if (n >= delivery.max_attempts || answer.refused) {
      await this.settle(org, delivery, { status: 'failed', finished_at: attempt.at, next_attempt_at: null }, attempt, webhook);
      return { done: true, retryInMs: 0 };
    }
    const retryInMs = retryDelayMs(n, this.options.retryBaseMs, answer.retryAfterMs);
    await this.settle(org, delivery, { status: 'queued', finished_at: null, next_attempt_at: isoAt(this.clock.now() + retryInMs) }, attempt);
    return { done: false, retryInMs };
  }

  private async settle(
    org: OrgId,
    delivery: WebhookDeliveryDoc,
    patch: Pick<WebhookDeliveryDoc, 'status' | 'finished_at' | 'next_attempt_at'>,
    attempt: WebhookAttempt | null,
    webhook: OutboundWebhookDoc | null = null,
  ): Promise<void> {
    const attempts = attempt === null ? delivery.attempts : [...delivery.attempts, attempt];
    const updated = await this.options.collections.webhookDeliveries.update(org, delivery.id, { ...patch, attempts });
    if (updated) for (const listener of [...(this.listeners.get(delivery.id) ?? [])]) listener(updated);
    if (updated && this.options.activity) await reportDelivery(this.options.activity, org, updated, webhook);
  }

  private async post(
    org: OrgId,
    webhook: OutboundWebhookDoc,
    delivery: WebhookDeliveryDoc,
    stopped: AbortSignal,
  ): Promise<{ answer: { status: number | null; error: string | null; retryAfterMs: number | null; refused?: boolean }; latencyMs: number }> {
    const { secrets } = this.options;
    const body = Buffer.from(delivery.body, 'utf8');
    const overlap =
      webhook.previous_secret_sealed !== null &&
      webhook.previous_secret_expires_at !== null &&
      Date.parse(webhook.previous_secret_expires_at) > this.clock.now();
    const headers = signatureHeaders({
      id: delivery.id,
      timestamp: Math.floor(this.clock.now() / 1000),
      body,
      secret: secrets.open(org, webhook.id, webhook.secret_sealed),
      previousSecret: overlap && webhook.previous_secret_sealed !== null ? secrets.open(org, webhook.id, webhook.previous_secret_sealed) : null,
    });
    const started = performance.now();
    try {
      const response = await this.egress.fetch(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        body,
        // a redirect is an answer, not something to follow with a signed body
        redirect: 'manual',
        signal: AbortSignal.any([stopped, AbortSignal.timeout(this.options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS)]),
      });
      // the answer's body is not kept; drain it so the connection is reused
      await response.arrayBuffer().catch(() => undefined);
      const latencyMs = Math.round(performance.now() - started);
      const ok = response.status >= 200 && response.status < 300;
      return {
        answer: { status: response.status, error: ok ? null : `receiver answered ${response.status}`, retryAfterMs: retryAfterMs(response.headers) },
        latencyMs,
      };
    } catch (error) {
      const latencyMs = Math.round(performance.now() - started);
      const refusal = egressRefusalOf(error);
      if (refusal !== null) return { answer: { status: null, error: `egress_refused: ${refusal.message}`, retryAfterMs: null, refused: true }, latencyMs };
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      const message = timedOut ? `no answer within ${this.options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS} ms` : networkError(error);
      return { answer: { status: null, error: message, retryAfterMs: null }, latencyMs };
    }
  }
}

/** fetch wraps the socket error in `cause`: show the code (ECONNREFUSED ...), never the URL */
function networkError(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? `network error ${cause.code}` : 'network error';
}
