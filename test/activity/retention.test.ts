/**
 * Retention: entries of the feed, the audit log and notifications older than
 * ACTIVITY_RETENTION_DAYS go at the next hourly sweep on the runtime clock
 * (simulated here), younger ones stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session, TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { simulatedClock } from '../helpers/clock.js';
import { startTestServer } from '../helpers/server.js';

const DAY_MS = 86_400_000;

describe('activity retention', () => {
  const clock = simulatedClock(new Date().toISOString());
  let server: TestServer;
  let owner: Session;

  beforeAll(async () => {
    server = await startTestServer({ ACTIVITY_RETENTION_DAYS: '30' }, { clock });
    owner = await server.register();
  });
  afterAll(async () => {
    await server.stop();
  });

  const total = async (): Promise<number> => {
    const answer = await server.request('GET', '/activity/audit-log', { token: owner.token });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.total as number;
  };

  it('keeps entries inside the window and deletes them once they are older', async () => {
    expect((await server.request('POST', '/realms', { token: owner.token, body: { name: 'kept-a-while' } })).status).toBe(201);
    expect(await total()).toBe(2);
    clock.increment(29 * DAY_MS);
    // the sweep the clock just fired (or a new one): nothing is old enough yet
    expect(await server.service.services.activitySweeper.sweep()).toBe(0);
    expect(await total()).toBe(2);
    clock.increment(2 * DAY_MS);
    await eventually(async () => ((await total()) === 0 ? true : undefined), { what: 'the expired entries to go' });
  });
});
