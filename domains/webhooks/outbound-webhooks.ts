/**
 * Outbound webhooks as a service: create (secret sealed), rotate with an
 * overlap, look up by id or name, and send (enqueue a delivery). The REST
 * routes and the `webhooks.send` tool both go through it.
 */
import type { Collections } from '../collections.js';
import type { OutboundWebhookDoc, WebhookDeliveryDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { assertEgressAllowed } from '../../runtime/net/egress.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { WebhookDispatcher } from './dispatcher.js';
import { generateWebhookSecret, secretHint, type WebhookSecrets } from './secrets.js';
import { isoAt } from '../../runtime/clock.js';

/** @default 24 hours: how long the previous secret keeps signing after a rotation */
export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;

export interface NewWebhook {
  readonly name: string;
  readonly url: string;
  /** generated when absent */
  readonly secret?: string | undefined;
  readonly retries: number;
  readonly createdBy: string;
}

export interface SendRequest {
  readonly event: string;
  readonly payload: unknown;
  readonly runId: string | null;
  readonly createdBy: string;
}

export class OutboundWebhooks {
  constructor(
    private readonly collections: Collections,
    private readonly secrets: WebhookSecrets,
    readonly dispatcher: WebhookDispatcher,
  ) {}

  /** 422 `egress_refused` when the receiver URL is a literal address the egress guard refuses. */
  checkUrl(url: string): void {
    assertEgressAllowed(this.dispatcher.egress, url, 'url');
  }

  /** Creates the webhook; returns it with the plain secret (shown once). */
  async create(org: OrgId, input: NewWebhook): Promise<{ webhook: OutboundWebhookDoc; secret: string }> {
    this.checkUrl(input.url);
    const id = newId('owh');
    const secret = input.secret ?? generateWebhookSecret();
    const webhook = await this.collections.outboundWebhooks.insert(org, {
      id,
      name: input.name,
      url: input.url,
      secret_sealed: this.secrets.seal(org, id, secret),
      secret_hint: secretHint(secret),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      retries: input.retries,
      created_by: input.createdBy,
    });
    return { webhook, secret };
  }

  /**
   * A new secret signs from now on; the current one keeps signing alongside
   * it for `overlapSeconds` (0: stops at once), so receivers can switch
   * without rejecting deliveries.
   */
  async rotate(
    org: OrgId,
    webhook: OutboundWebhookDoc,
    options: { readonly secret?: string | undefined; readonly overlapSeconds: number },
  ): Promise<{ webhook: OutboundWebhookDoc; secret: string }> {
    const secret = options.secret ?? generateWebhookSecret();
    const overlap = options.overlapSeconds > 0;
    const updated = await this.collections.outboundWebhooks.update(org, webhook.id, {
      secret_sealed: this.secrets.seal(org, webhook.id, secret),
      secret_hint: secretHint(secret),
      previous_secret_sealed: overlap ? webhook.secret_sealed : null,
      previous_secret_expires_at: overlap ? isoAt(this.dispatcher.clock.now() + options.overlapSeconds * 1000) : null,
    });
    if (!updated) throw new ServiceError('not_found', `webhook ${webhook.id} not found`);
    return { webhook: updated, secret };
  }

  /** By id, else by name; null when the organization has neither. */
  async find(org: OrgId, ref: string): Promise<OutboundWebhookDoc | null> {
    return (await this.collections.outboundWebhooks.get(org, ref)) ?? (await this.collections.outboundWebhooks.findOne(org, { name: ref }));
  }

  /** Enqueues a delivery; with `waitMs`, answers after its first attempt (or at the wait's end, still `queued`). */
  send(org: OrgId, webhook: OutboundWebhookDoc, request: SendRequest, waitMs = 0): Promise<WebhookDeliveryDoc> {
    return this.dispatcher.enqueue(org, { webhook, ...request }, waitMs);
  }
}
