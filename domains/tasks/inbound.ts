/**
 * Intake of `POST /hooks/:trigger_id`, in this order:
 * 1. the task by its trigger id (unknown or disabled: 404);
 * 2. the task's rate (429 with Retry-After; nothing stored, so a flood costs no storage);
 * 3. the signature over the exact raw bytes, constant time, BEFORE any parsing,
 *    by the task's `signature_scheme` (service, github, vercel,
 *    standard_webhooks, slack, token: domains/tasks/signatures/), keyed by
 *    the task's secret, or by the previous secret during a rotation's
 *    overlap; schemes with a timestamp refuse one outside their tolerance
 *    (replay protection); failures are stored as rejected deliveries and
 *    answered 401;
 * 4. sender delivery ids (`X-GitHub-Delivery`, `webhook-id`, ...): a repeat
 *    answers 200 with the original delivery and starts nothing;
 * 5. the body by content type (JSON, form, multipart); with the slack scheme,
 *    Slack's signed `url_verification` is answered with its challenge;
 * 6. the delivery is stored, the fire handed to the task; 202.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { sha256Hex } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { redactHeaders } from '../../runtime/secret-headers.js';
import { UniqueViolation, type OrgId } from '../../runtime/store/types.js';
import type { Supervisor } from '../../runtime/supervisor.js';
import { urlVerificationSchema } from '../channels/slack-events.js';
import { BodyParseError, parseWebhookBody } from './body.js';
import { TriggerRateLimiter } from './rate-limiter.js';
import { TRIGGER_ID_PATTERN, type SecretBox } from './secrets.js';
import { verifierOf, type SchemeCheck } from './signatures/index.js';
import type { TaskService } from './service.js';
import type { InboundDeliveryDoc, TaskDoc, VerificationResult } from './types.js';

/** Sender headers that carry a delivery id, most specific first. */
const SENDER_DELIVERY_HEADERS = ['x-github-delivery', 'webhook-id', 'x-gitlab-event-uuid', 'x-delivery-id'] as const;
/** never stored: credentials a sender (or a proxy) may add */
const UNSTORED_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-webhook-token']);
/** a resolved trigger is reused this long (task edits invalidate it at once) */
const TRIGGER_CACHE_MS = 5_000;

export interface InboundRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** the `token` scheme may carry its token as `?token=` */
  readonly query?: URLSearchParams;
}

export interface InboundAccepted {
  /** 202 for a new delivery, 200 for a repeat of a sender delivery id */
  readonly status: 200 | 202;
  readonly delivery_id: string;
  readonly run_id: string | null;
  /** `refused`: the task's pending queue was full; the run is recorded as failed (queue_full) */
  readonly run_status: 'pending' | 'running' | 'refused' | 'duplicate';
}

/** slack scheme: the answer to Slack's `url_verification` (nothing stored, nothing run) */
export interface SlackChallenge {
  readonly status: 200;
  readonly challenge: string;
}

interface ResolvedTrigger {
  readonly org: OrgId;
  readonly task: TaskDoc;
  readonly secrets: readonly { readonly secret: string; readonly previous: boolean }[];
  readonly until: number;
}

export class InboundHooks {
  private readonly limiter: TriggerRateLimiter;
  private readonly cache = new Map<string, ResolvedTrigger>();

  constructor(
    private readonly deps: {
      readonly config: ServiceConfig;
      readonly collections: Collections;
      readonly supervisor: Supervisor;
      readonly tasks: TaskService;
      readonly secrets: SecretBox;
      readonly logger: Logger;
    },
  ) {
    this.limiter = new TriggerRateLimiter(() => deps.supervisor.clock.now());
  }

  /** Drops what is cached about a task's trigger (after an edit, rotation, delete). */
  forget(task: TaskDoc): void {
    if (task.trigger_id !== undefined) this.cache.delete(task.trigger_id);
    this.limiter.forget(task.id);
  }

  async receive(triggerId: string, request: InboundRequest): Promise<InboundAccepted | SlackChallenge> {
    const { task, org, secrets } = await this.resolve(triggerId);
    const rate = this.limiter.take(task.id, task.rate_limit_per_minute);
    if (!rate.allowed) {
      throw new ServiceError(
        'rate_limited',
        `this trigger accepts ${task.rate_limit_per_minute} requests per minute`,
        { retry_after_secs: rate.retryAfterSecs },
        { 'retry-after': String(rate.retryAfterSecs) },
      );
    }
    const verification = this.verify(task, secrets, request);
    if (verification !== 'valid' && verification !== 'valid_previous_secret' && verification !== 'skipped') {
      const message = verifierOf(task.signature_scheme).failure(verification, { toleranceSecs: task.timestamp_tolerance_secs });
      await this.store(org, task, request, { verification, status: 'rejected', error: message, run_id: null });
      throw new ServiceError('bad_signature', message);
    }
    const senderId = senderDeliveryId(request.headers);
    if (senderId !== undefined) {
      const original = await this.deps.collections.inboundDeliveries.findOne(org, { task_id: task.id, sender_delivery_id: senderId });
      if (original) return { status: 200, delivery_id: original.id, run_id: original.run_id, run_status: 'duplicate' };
    }
    let body: unknown;
    try {
      body = parseWebhookBody(request.body, request.headers['content-type'], this.deps.config.maxJsonDepth);
    } catch (error) {
      if (!(error instanceof BodyParseError)) throw error;
      await this.store(org, task, request, { verification, status: 'rejected', error: error.message, run_id: null });
      throw new ServiceError(error.kind, error.message);
    }
    if (task.signature_scheme === 'slack') {
      const verification = urlVerificationSchema.safeParse(body);
      if (verification.success) return { status: 200, challenge: verification.data.challenge };
    }
    const runId = newId('run');
    let delivery: InboundDeliveryDoc;
    try {
      delivery = await this.store(org, task, request, { verification, status: 'accepted', error: null, run_id: runId, sender_delivery_id: senderId });
    } catch (error) {
      // the same sender delivery id arriving twice at once: the first one stored wins
      if (error instanceof UniqueViolation && senderId !== undefined) {
        const original = await this.deps.collections.inboundDeliveries.findOne(org, { task_id: task.id, sender_delivery_id: senderId });
        if (original) return { status: 200, delivery_id: original.id, run_id: original.run_id, run_status: 'duplicate' };
      }
      throw error;
    }
    const headers = storedHeaders(request.headers);
    let outcome: Awaited<ReturnType<TaskService['fireTask']>>;
    try {
      outcome = await this.deps.tasks.fireTask(org, task, { origin: 'webhook', body, headers, delivery_id: delivery.id }, { runId, deliveryId: delivery.id });
    } catch (error) {
      // no run came of it (shutting down, task stopped meanwhile): the stored delivery says so, and can be replayed
      await this.deps.collections.inboundDeliveries.update(org, delivery.id, {
        status: 'rejected',
        error: error instanceof Error ? error.message : String(error),
        run_id: null,
      });
      throw error;
    }
    return { status: 202, delivery_id: delivery.id, run_id: outcome.run_id, run_status: outcome.status };
  }

  /** Fires a stored delivery again into its task: a new run, linked to the original delivery. */
  async replay(org: OrgId, deliveryId: string): Promise<{ delivery_id: string; run_id: string; status: string }> {
    const delivery = await this.deps.collections.inboundDeliveries.get(org, deliveryId);
    if (!delivery) throw new ServiceError('not_found', `delivery ${deliveryId} not found`);
    const task = await this.deps.collections.tasks.get(org, delivery.task_id);
    if (!task) throw new ServiceError('not_found', `the task of delivery ${deliveryId} no longer exists`);
    if (delivery.body_sha256 !== undefined) {
      throw new ServiceError('conflict', `delivery ${deliveryId} failed verification: its body was not kept, so it cannot be replayed`);
    }
    const raw = Buffer.from(delivery.body_base64, 'base64');
    let body: unknown;
    try {
      body = parseWebhookBody(raw, delivery.headers['content-type'], this.deps.config.maxJsonDepth);
    } catch (error) {
      if (error instanceof BodyParseError) throw new ServiceError('conflict', `delivery ${deliveryId} has no readable body: ${error.message}`);
      throw error;
    }
    const result = await this.deps.tasks.fire(
      org,
      task.id,
      { origin: 'replay', body, headers: delivery.headers, delivery_id: delivery.id },
      { deliveryId: delivery.id, replayOf: delivery.id },
    );
    return { delivery_id: delivery.id, run_id: result.run_id, status: result.status };
  }

  private async resolve(triggerId: string): Promise<ResolvedTrigger> {
    const notFound = (): ServiceError => new ServiceError('not_found', `no enabled trigger ${triggerId}`);
    if (!TRIGGER_ID_PATTERN.test(triggerId)) throw notFound();
    const now = this.deps.supervisor.clock.now();
    const cached = this.cache.get(triggerId);
    if (cached && cached.until > now) {
      if (!cached.task.enabled) throw notFound();
      return cached;
    }
    const [found] = await this.deps.collections.tasks.findAcrossOrgs({ trigger_id: triggerId }, 1);
    if (!found || !found.enabled || found.trigger_kind !== 'webhook') throw notFound();
    const { org_id: org, ...task } = found;
    const secrets: { secret: string; previous: boolean }[] = [];
    if (task.secret_sealed !== null) secrets.push({ secret: this.deps.secrets.open(task.id, task.secret_sealed), previous: false });
    if (task.previous_secret_sealed !== null && task.previous_secret_expires_at !== null) {
      secrets.push({ secret: this.deps.secrets.open(task.id, task.previous_secret_sealed), previous: true });
    }
    const resolved: ResolvedTrigger = { org, task, secrets, until: now + TRIGGER_CACHE_MS };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(triggerId, resolved);
    return resolved;
  }

  private verify(task: TaskDoc, secrets: ResolvedTrigger['secrets'], request: InboundRequest): VerificationResult {
    // `verify_signature: false` is refused at save in production; a task saved before the switch is still verified
    if (!task.verify_signature && !this.deps.config.production) return 'skipped';
    const verifier = verifierOf(task.signature_scheme);
    const now = this.deps.supervisor.clock.now();
    const context = { nowMs: now, requireTimestamp: task.require_timestamp, toleranceSecs: task.timestamp_tolerance_secs };
    let result: VerificationResult | null = null;
    let failure: Exclude<SchemeCheck, 'valid'> = 'invalid';
    // every secret is checked (no early exit), so timing does not tell which one matched
    for (const { secret, previous } of secrets) {
      if (previous && (task.previous_secret_expires_at === null || Date.parse(task.previous_secret_expires_at) <= now)) continue;
      const check = verifier.verify(secret, request, context);
      if (check !== 'valid') failure = check;
      else if (result === null) result = previous ? 'valid_previous_secret' : 'valid';
    }
    return result ?? failure;
  }

  private store(
    org: OrgId,
    task: TaskDoc,
    request: InboundRequest,
    outcome: Pick<InboundDeliveryDoc, 'verification' | 'status' | 'error' | 'run_id'> & { readonly sender_delivery_id?: string | undefined },
  ): Promise<InboundDeliveryDoc> {
    const { sender_delivery_id: senderId, ...rest } = outcome;
    return this.deps.collections.inboundDeliveries.insert(org, {
      task_id: task.id,
      ...(senderId === undefined ? {} : { sender_delivery_id: senderId }),
      ...storedRequest(request, outcome.verification),
      ...rest,
      received_at: new Date(this.deps.supervisor.clock.now()).toISOString(),
    });
  }
}

function senderDeliveryId(headers: Readonly<Record<string, string>>): string | undefined {
  for (const name of SENDER_DELIVERY_HEADERS) {
    const value = headers[name]?.trim();
    if (value !== undefined && value !== '' && value.length <= 200) return `${name}:${value}`;
  }
  return undefined;
}

const VERIFIED: ReadonlySet<VerificationResult> = new Set(['valid', 'valid_previous_secret', 'skipped']);

/**
 * What of a request is kept with its delivery. A delivery that failed
 * verification came from anyone: its body is not kept (a flood of 1 MB
 * unsigned posts would otherwise sit in the store for the retention period),
 * only its size and SHA-256, and its signature headers are redacted.
 */
function storedRequest(
  request: InboundRequest,
  verification: VerificationResult,
): Pick<InboundDeliveryDoc, 'headers' | 'body_base64' | 'size_bytes' | 'body_sha256'> {
  const headers = storedHeaders(request.headers);
  if (VERIFIED.has(verification)) return { headers, body_base64: request.body.toString('base64'), size_bytes: request.body.length };
  return { headers: redactHeaders(headers), body_base64: '', size_bytes: request.body.length, body_sha256: sha256Hex(request.body) };
}

function storedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!UNSTORED_HEADERS.has(name)) out[name] = value;
  return out;
}
