/**
 * Outbound webhooks as a service: create (secret sealed), change, delete,
 * rotate with an overlap, look up by id or name, send (enqueue a delivery),
 * a test send and the delivery log. The REST routes and the `webhooks.send`
 * tool both go through it.
 */
import type { Collections } from '../collections.js';
import type { OutboundWebhookDoc, WebhookDeliveryDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { getOr404, unique } from '../../runtime/store/documents.js';
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

  /** the webhooks as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['outboundWebhooks'], 'list' | 'revision'> {
    return this.collections.outboundWebhooks;
  }

  /** every delivery as a read-only listing; a webhook's log filters it on `webhook_id` */
  get deliveryListing(): Pick<Collections['webhookDeliveries'], 'list' | 'revision'> {
    return this.collections.webhookDeliveries;
  }

  /** Creates the webhook; returns it with the plain secret (shown once). Names are unique. */
  async create(org: OrgId, input: NewWebhook): Promise<{ webhook: OutboundWebhookDoc; secret: string }> {
    this.checkUrl(input.url);
    const id = newId('owh');
    const secret = input.secret ?? generateWebhookSecret();
    const webhook = await unique('webhook', () =>
      this.collections.outboundWebhooks.insert(org, {
        id,
        name: input.name,
        url: input.url,
        secret_sealed: this.secrets.seal(org, id, secret),
        secret_hint: secretHint(secret),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        retries: input.retries,
        created_by: input.createdBy,
      }),
    );
    return { webhook, secret };
  }

  get(org: OrgId, id: string): Promise<OutboundWebhookDoc> {
    return getOr404(this.collections.outboundWebhooks, org, id, 'webhook');
  }

  /** name, url or retries; the secret changes only through `rotate` */
  async update(
    org: OrgId,
    id: string,
    patch: { readonly name?: string | undefined; readonly url?: string | undefined; readonly retries?: number | undefined },
  ): Promise<OutboundWebhookDoc> {
    const webhook = await this.get(org, id);
    if (patch.url !== undefined) this.checkUrl(patch.url);
    const updated = await unique('webhook', () => this.collections.outboundWebhooks.update(org, webhook.id, patch));
    if (!updated) throw new ServiceError('not_found', `webhook ${id} not found`);
    return updated;
  }

  /** deliveries still queued end as failed (the dispatcher finds no webhook) */
  async delete(org: OrgId, id: string): Promise<void> {
    const webhook = await this.get(org, id);
    await this.collections.outboundWebhooks.delete(org, webhook.id);
  }

  /**
   * A new secret signs from now on; the current one keeps signing alongside
   * it for `overlapSeconds` (0: stops at once), so receivers can switch
   * without rejecting deliveries.
   */
  async rotate(
    org: OrgId,
    id: string,
    options: { readonly secret?: string | undefined; readonly overlapSeconds: number },
  ): Promise<{ webhook: OutboundWebhookDoc; secret: string }> {
    const webhook = await this.get(org, id);
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

  /** Sends a `webhook.test` event; answers after the first attempt or `waitMs` (retries go on in the background). */
  async test(org: OrgId, id: string, createdBy: string, extra: Record<string, unknown> | undefined, waitMs: number): Promise<WebhookDeliveryDoc> {
    const webhook = await this.get(org, id);
    const payload = {
      type: 'webhook.test',
      timestamp: isoAt(this.dispatcher.clock.now()),
      data: { webhook_id: webhook.id, webhook_name: webhook.name, ...extra },
    };
    return this.send(org, webhook, { event: 'webhook.test', payload, runId: null, createdBy }, waitMs);
  }

  /** one delivery of the webhook, or 404 (also for another webhook's delivery) */
  async delivery(org: OrgId, webhookId: string, deliveryId: string): Promise<WebhookDeliveryDoc> {
    const delivery = await this.collections.webhookDeliveries.get(org, deliveryId);
    if (!delivery || delivery.webhook_id !== webhookId) throw new ServiceError('not_found', `delivery ${deliveryId} not found`);
    return delivery;
  }
}
