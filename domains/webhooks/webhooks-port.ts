/**
 * The `webhooks` port of the connector contract over the outbound webhooks:
 * bound to the call's organization; a delivery is signed, queued and retried
 * like any other (`webhooks.send` is its tool).
 */
import { ToolError, type PortScope, type WebhookDelivery, type WebhooksPort } from '../../connectors/contract.js';
import type { WebhookDeliveryDoc } from './documents.js';
import { asOrgId } from '../../runtime/store/types.js';
import type { OutboundWebhooks } from './outbound-webhooks.js';

const deliveryOf = (doc: WebhookDeliveryDoc): WebhookDelivery => ({
  id: doc.id,
  status: doc.status,
  attempts: doc.attempts.map(({ status, latency_ms, error }) => ({ status, latency_ms, error })),
});

export function webhooksPort(webhooks: OutboundWebhooks): (scope: PortScope) => WebhooksPort {
  return (call) => {
    const org = asOrgId(call.orgId);
    return {
      find: async (ref) => {
        const webhook = await webhooks.find(org, ref);
        return webhook === null ? null : { id: webhook.id, name: webhook.name };
      },
      send: async (webhookId, message, waitMs) => {
        // found again by id: the caller holds only the reference, and the webhook may have gone since
        const webhook = await webhooks.find(org, webhookId);
        if (webhook === null || webhook.id !== webhookId) throw new ToolError('webhook_not_found', `no outbound webhook with id "${webhookId}"`);
        return deliveryOf(await webhooks.send(org, webhook, { ...message, runId: null }, waitMs));
      },
    };
  };
}
