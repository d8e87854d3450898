/**
 * The built-in `webhooks` connector: lets an agent POST a JSON payload to one
 * of the organization's outbound webhooks (signed, queued, retried).
 * Sourceless: the webhooks are the organization's own, no credentials needed.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import { sendTool } from './tools/send.js';

/** Its tool reaches the outbound webhooks through the `webhooks` port. */
export function createWebhooksPlugin(): ConnectorPlugin {
  return {
    kind: 'webhooks',
    version: '1.0.0',
    contract: '^1',
    description: "The organization's outbound webhooks: send a signed JSON payload to a configured URL.",
    ...sourcelessParts('webhooks'),
    requires: ['webhooks'],
    tools: [sendTool()],
  };
}
