/** Outbound webhook deliveries reach the feed once settled: delivered, or failed for good. */
import type { OutboundWebhookDoc, WebhookDeliveryDoc } from '../webhooks/documents.js';
import type { OrgId } from '../../runtime/store/types.js';
import { SYSTEM_ACTOR, type ActivityRecorder } from './record.js';

export async function reportDelivery(recorder: ActivityRecorder, org: OrgId, delivery: WebhookDeliveryDoc, webhook: OutboundWebhookDoc | null): Promise<void> {
  if (delivery.status !== 'delivered' && delivery.status !== 'failed') return;
  const ok = delivery.status === 'delivered';
  const last = delivery.attempts.at(-1);
  const name = webhook?.name ?? delivery.webhook_id;
  await recorder.activity(org, {
    kind: ok ? 'webhook.delivery_succeeded' : 'webhook.delivery_failed',
    actor: SYSTEM_ACTOR,
    subject: { kind: 'webhook_delivery', id: delivery.id },
    summary: `${delivery.event} to ${name} ${ok ? 'delivered' : 'failed'}`,
    details: {
      webhook_id: delivery.webhook_id,
      webhook_name: webhook?.name ?? null,
      event: delivery.event,
      attempts: delivery.attempts.length,
      http_status: last?.status ?? null,
      run_id: delivery.run_id,
    },
  });
}
