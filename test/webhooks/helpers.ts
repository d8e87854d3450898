/** Shared by the outbound webhook suites: create a webhook and wait for a delivery to settle. */
import type { Session, TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

export async function createWebhook(server: TestServer, session: Session, body: Record<string, unknown>): Promise<any> {
  const created = await server.request('POST', '/webhooks', { token: session.token, body });
  if (created.status !== 201) throw new Error(`create webhook: ${created.status} ${created.text}`);
  return created.body;
}

/** Polls the delivery until its status is one of `statuses` (the dispatcher works in the background). */
export async function waitForDelivery(
  server: TestServer,
  session: Session,
  webhookId: string,
  deliveryId: string,
  statuses: readonly string[] = ['delivered', 'failed'],
): Promise<any> {
  return eventually(
    async () => {
      const answer = await server.request('GET', `/webhooks/${webhookId}/deliveries/${deliveryId}`, { token: session.token });
      if (answer.status !== 200) throw new Error(`delivery: ${answer.status} ${answer.text}`);
      return statuses.includes(answer.body.status as string) ? answer.body : undefined;
    },
    { what: `delivery ${deliveryId} to be ${statuses.join(' or ')}`, timeout: 25_000 },
  );
}
