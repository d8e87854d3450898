/**
 * Schedule triggers on an injected clock (XState's SimulatedClock under the
 * runtime supervisor): no sleeping for cron, and a restart of the same data
 * dir to show that schedules resume without firing an occurrence twice.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { withTestServer, type Session, type TestServer } from '../helpers/server.js';
import { startFakeLlmServer, wireOrganization } from '../runtime/chat-helpers.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { expectError, expectStatus } from '../helpers/expect-status.js';
import { createTask, hookPath, runReaches, runsOf } from './helpers.js';

describe('schedule triggers', () => {
  let llm: FakeLlmServer;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-schedule-'));
  const jwtSecret = randomBytes(32).toString('hex');
  const env = { LLM_API_KEY: FAKE_LLM_API_KEY, WEBHOOK_RETENTION_DAYS: '1' };

  beforeAll(async () => {
    llm = await startFakeLlmServer();
  });
  afterAll(async () => {
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** the service on the shared data dir with its clock at `iso`, for `body`; stopped afterwards */
  const runAt = async (iso: string, body: (server: TestServer, clock: ReturnType<typeof simulatedClock>) => Promise<void>): Promise<void> => {
    const clock = simulatedClock(iso);
    await withTestServer({ ...env, JWT_SECRET: jwtSecret }, { dataDir, clock }, async (server) => {
      await body(server, clock);
    });
  };
  /** the task's runs once the timers the clock released have had their turn: a fire that should not happen would be there by now */
  const runsSettled = async (server: TestServer, owner: Session, taskId: string) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return runsOf(server, owner, taskId);
  };

  it('fires on the cron occurrence (UTC), once per occurrence, skips missed ones, and resumes after a restart without a double fire', async () => {
    let owner!: Session;
    let taskId!: string;
    await runAt('2026-03-02T08:58:30.000Z', async (server, clock) => {
      owner = (await wireOrganization(server, llm)).session;
      const task = await createTask(server, owner, {
        name: 'every minute',
        trigger: { kind: 'schedule', cron: '* * * * *' },
        input_template: { instruction: 'Scheduled at {{trigger.body.scheduled_at}}' },
      });
      taskId = task.id;
      const view = await server.request('GET', `/tasks/${taskId}`, { token: owner.token });
      expect(view.body.runtime.next_fire_at).toBe('2026-03-02T08:59:00.000Z');
      expect(await runsOf(server, owner, taskId)).toHaveLength(0);

      llm.script([{ text: 'one' }]);
      clock.increment(30_000); // 08:59:00
      const [first] = await eventually(
        async () => {
          const runs = await runsOf(server, owner, taskId);
          return runs.length === 1 ? runs : undefined;
        },
        { what: 'the first scheduled run' },
      );
      expect(first.origin).toBe('schedule');
      expect(first.input.instruction).toBe('Scheduled at 2026-03-02T08:59:00.000Z');
      await runReaches(server, owner, taskId, first.id, 'succeeded');
      const fired = await server.request('GET', `/tasks/${taskId}`, { token: owner.token });
      expect(fired.body.last_fired_at).toBe('2026-03-02T08:59:00.000Z');
      expect(fired.body.runtime.next_fire_at).toBe('2026-03-02T09:00:00.000Z');

      // 30 s later: not yet
      clock.increment(30_000);
      expect(await runsSettled(server, owner, taskId)).toHaveLength(1);
    });

    // the process comes back with its clock behind the last fire (another host, a skewed clock): 08:59:00 must not fire again
    await runAt('2026-03-02T08:58:50.000Z', async (server, behind) => {
      const view = await server.request('GET', `/tasks/${taskId}`, { token: owner.token });
      expect(view.body.runtime).toMatchObject({ state: 'scheduled', next_fire_at: '2026-03-02T09:00:00.000Z' });
      behind.increment(15_000); // 08:59:05
      expect(await runsSettled(server, owner, taskId)).toHaveLength(1);
    });

    // down for an hour: the missed occurrences are skipped, the next one fires once
    await runAt('2026-03-02T10:00:30.000Z', async (server, later) => {
      expect(await runsSettled(server, owner, taskId)).toHaveLength(1);
      llm.script([{ text: 'two' }]);
      later.increment(30_000); // 10:01:00
      const runs = await eventually(
        async () => {
          const all = await runsOf(server, owner, taskId);
          return all.length === 2 ? all : undefined;
        },
        { what: 'the resumed scheduled run' },
      );
      expect(runs[1].input.instruction).toBe('Scheduled at 2026-03-02T10:01:00.000Z');
      await runReaches(server, owner, taskId, runs[1].id, 'succeeded');

      // disabled: the timer is gone
      await server.request('PATCH', `/tasks/${taskId}`, { token: owner.token, body: { enabled: false } });
      later.increment(120_000);
      expect(await runsSettled(server, owner, taskId)).toHaveLength(2);

      // a cron change re-plans the next occurrence
      await server.request('PATCH', `/tasks/${taskId}`, { token: owner.token, body: { enabled: true, trigger: { kind: 'schedule', cron: '30 12 * * *' } } });
      const replanned = await server.request('GET', `/tasks/${taskId}`, { token: owner.token });
      expect(replanned.body.runtime.next_fire_at).toBe('2026-03-02T12:30:00.000Z');
    });
  });

  it("reads the cron in the task's IANA time zone across a daylight-saving change; an unknown zone is a 400", async () => {
    // Saturday 2026-03-07 15:00Z: New York is on EST; it moves to EDT on Sunday 2026-03-08
    await runAt('2026-03-07T15:00:00.000Z', async (server) => {
      const { session: owner } = await wireOrganization(server, llm);
      const task = await createTask(server, owner, {
        name: 'nine in new york',
        trigger: { kind: 'schedule', cron: '0 9 * * *', timezone: 'America/New_York' },
      });
      const view = await server.request('GET', `/tasks/${task.id}`, { token: owner.token });
      expect(view.body.trigger).toMatchObject({ kind: 'schedule', cron: '0 9 * * *', timezone: 'America/New_York' });
      // Sunday 09:00 EDT (UTC-4), not 14:00Z as EST would give
      expect(view.body.runtime.next_fire_at).toBe('2026-03-08T13:00:00.000Z');

      const moved = await server.request('PATCH', `/tasks/${task.id}`, {
        token: owner.token,
        body: { trigger: { kind: 'schedule', cron: '0 9 * * *', timezone: 'Asia/Tokyo' } },
      });
      expectStatus(moved, 200);
      // 09:00 in Tokyo (UTC+9, no DST) on Sunday is 00:00Z
      expect((await server.request('GET', `/tasks/${task.id}`, { token: owner.token })).body.runtime.next_fire_at).toBe('2026-03-08T00:00:00.000Z');

      const utc = await createTask(server, owner, { name: 'nine utc', trigger: { kind: 'schedule', cron: '0 9 * * *' } });
      expect(utc.trigger).toMatchObject({ timezone: 'UTC' });

      const bad = await server.request('POST', '/tasks', {
        token: owner.token,
        body: { name: 'nowhere', trigger: { kind: 'schedule', cron: '0 9 * * *', timezone: 'Mars/Olympus_Mons' } },
      });
      expectError(bad, 400, 'validation_error');
      expect(JSON.stringify(bad.body)).toContain('unknown time zone');
    });
  });

  it('sweeps deliveries older than WEBHOOK_RETENTION_DAYS', async () => {
    const clock = simulatedClock('2026-04-01T00:00:00.000Z');
    await withTestServer({ WEBHOOK_RETENTION_DAYS: '1' }, { clock }, async (server) => {
      const owner = await server.register();
      // no LLM configured: the run fails at once (llm_unconfigured), the delivery is what matters here
      const task = await createTask(server, owner, { name: 'retained', trigger: { kind: 'webhook' }, input: { instruction: 'x' } });
      const body = '{"n":1}';
      const hit = await server.request('POST', hookPath(task.trigger.url), {
        body,
        headers: { 'content-type': 'application/json', 'x-service-signature': signHmac(task.trigger.secret, Buffer.from(body)) },
      });
      expect(hit.status).toBe(202);
      const failed = await runReaches(server, owner, task.id, hit.body.run_id, 'failed');
      expect(failed.reason).toBe('llm_unconfigured');
      clock.increment(12 * 3_600_000);
      expect((await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.total).toBe(1);
      clock.increment(13 * 3_600_000);
      await eventually(
        async () => {
          const deliveries = await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token });
          return deliveries.body.total === 0 ? true : undefined;
        },
        { what: 'the sweep' },
      );
      expect((await server.request('GET', `/hooks/deliveries/${hit.body.delivery_id}`, { token: owner.token })).status).toBe(404);
    });
  });
});
