/**
 * webhooks.send: enqueues a delivery of `payload` to an outbound webhook
 * (by name or id) and returns its id. It waits briefly for the first
 * attempt so the model usually learns whether the receiver took it; a slow
 * or failing receiver does not hold the run: retries continue in the
 * background and the delivery log (`GET /webhooks/:id/deliveries`) has the rest.
 */
import { portOf, ToolError, type ConnectorTool, type WebhookDelivery } from '../../contract.js';

/** how long the tool waits for the first attempt before answering `queued` */
const FIRST_ATTEMPT_WAIT_MS = 3_000;
/** the largest payload, serialized */
const MAX_PAYLOAD_BYTES = 256 * 1024;

const summary = (delivery: WebhookDelivery) => {
  const last = delivery.attempts.at(-1);
  return {
    delivery_id: delivery.id,
    status: delivery.status,
    attempts: delivery.attempts.length,
    last_attempt: last ? { status: last.status, latency_ms: last.latency_ms, error: last.error } : null,
  };
};

export function sendTool(): ConnectorTool {
  return {
    name: 'send',
    effect: 'write',
    description:
      "POST a JSON object to one of the organization's outbound webhooks (by webhook name or id). The body is signed " +
      '(X-Service-Signature and Standard Webhooks headers) and retried on failure. Returns delivery_id and status: ' +
      "`delivered`, `queued` (still retrying or not answered yet) or `failed`, with the last attempt's HTTP status.",
    input_schema: {
      type: 'object',
      properties: {
        webhook: { type: 'string', minLength: 1, maxLength: 200, description: 'the webhook name or id' },
        payload: { type: 'object', description: 'the JSON object to send as the request body' },
      },
      required: ['webhook', 'payload'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      ctx.signal.throwIfAborted();
      const webhooks = portOf(ctx, 'webhooks');
      const ref = args['webhook'] as string;
      const payload = args['payload'] as Record<string, unknown>;
      if (Buffer.byteLength(JSON.stringify(payload), 'utf8') > MAX_PAYLOAD_BYTES) {
        throw new ToolError('invalid_arguments', `payload is at most ${MAX_PAYLOAD_BYTES} bytes as JSON`, {
          issues: [{ path: 'payload', message: `is over ${MAX_PAYLOAD_BYTES} bytes` }],
        });
      }
      const webhook = await webhooks.find(ref);
      if (!webhook) throw new ToolError('webhook_not_found', `no outbound webhook named or with id "${ref}"`);
      // the last point before the side effect: a cancelled run sends nothing
      ctx.signal.throwIfAborted();
      const delivery = await webhooks.send(webhook.id, { event: 'agent.send', payload, createdBy: ctx.actorId ?? 'agent' }, FIRST_ATTEMPT_WAIT_MS);
      return { webhook: webhook.name, ...summary(delivery) };
    },
  };
}
