/**
 * Engine `webhook`: the dispatch is POSTed to base_url as JSON, signed exactly
 * like outbound webhooks (domains/webhooks/signing.ts: `X-Service-Signature`
 * and the Standard Webhooks headers, keyed by the gateway's api_key, with
 * `webhook-id` = the dispatch id). The receiver answers 2xx and later POSTs a
 * signed completion to `callback_url`; or it answers `{status, output, error}`
 * at once. Health: a GET of base_url answered below 500.
 *
 * The completion is verified here too (`verifyCallback`): Standard Webhooks
 * headers keyed by the same secret, timestamp within 5 minutes of the runtime
 * clock, every listed `v1` signature compared in constant time on the raw bytes.
 */
import { z } from 'zod';
import { constantTimeEqual, hmacDigest } from '../../runtime/crypto.js';
import type { EgressGuard } from '../../runtime/net/egress.js';
import { ServiceError } from '../../runtime/errors.js';
import { signatureHeaders, standardWebhooksSecret } from '../webhooks/signing.js';
import type { GatewayDoc } from './documents.js';
import { answerMessage, callEngine, probeVerdict, type DispatchStart, type Engine, type StartResult } from './engines.js';

const CALLBACK_TOLERANCE_SECS = 300;

/** what a receiver answers or calls back with */
export const outcomeSchema = z.strictObject({
  status: z.enum(['succeeded', 'failed']),
  output: z.union([z.record(z.string(), z.unknown()), z.string().max(1_000_000), z.null()]).default(null),
  error: z.string().max(4000).optional(),
});

export class WebhookEngine implements Engine {
  constructor(private readonly egress: EgressGuard) {}

  probe(gateway: GatewayDoc): Promise<string | null> {
    return probeVerdict(
      () => callEngine(this.egress, gateway.base_url, { method: 'GET' }),
      (answer) => answer.status < 500,
    );
  }

  async start(gateway: GatewayDoc, apiKey: string | null, request: DispatchStart): Promise<StartResult> {
    if (apiKey === null) throw new ServiceError('conflict', `gateway ${gateway.id} has no api_key to sign with`);
    const body = Buffer.from(
      JSON.stringify({
        type: 'gateway.dispatch',
        dispatch_id: request.dispatchId,
        gateway_id: gateway.id,
        workflow_run_id: request.workflowRunId,
        step_id: request.stepId,
        input: request.input,
        context: gateway.context,
        callback_url: request.callbackUrl,
      }),
      'utf8',
    );
    const headers = signatureHeaders({ id: request.dispatchId, timestamp: Math.floor(request.nowMs / 1000), body, secret: apiKey, previousSecret: null });
    const answer = await callEngine(this.egress, gateway.base_url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    if (answer.status < 200 || answer.status >= 300) return { kind: 'settled', outcome: { status: 'failed', output: null, error: answerMessage(answer) } };
    const settled = outcomeSchema.safeParse(answer.json);
    if (settled.success) return { kind: 'settled', outcome: settled.data };
    return { kind: 'started', externalRef: request.dispatchId };
  }
}

/** true when a `webhook-signature` entry matches the raw body under the gateway's secret (and the timestamp is fresh) */
export function verifyCallback(secret: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Uint8Array, nowMs: number): boolean {
  const id = headers['webhook-id'];
  const stamp = headers['webhook-timestamp'];
  const header = headers['webhook-signature'];
  if (id === undefined || stamp === undefined || header === undefined || !/^\d{1,12}$/.test(stamp)) return false;
  if (Math.abs(Number(stamp) * 1000 - nowMs) > CALLBACK_TOLERANCE_SECS * 1000) return false;
  const key = Buffer.from(standardWebhooksSecret(secret).slice('whsec_'.length), 'base64');
  const expected = hmacDigest('sha256', key, `${id}.${stamp}.`, rawBody);
  let matched = false;
  // every listed signature is compared (no early exit)
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const encoded = entry.slice(comma + 1);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) continue;
    if (constantTimeEqual(expected, Buffer.from(encoded, 'base64'))) matched = true;
  }
  return matched;
}
