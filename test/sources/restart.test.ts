/**
 * Sources across a restart: configs sealed with SOURCE_CONFIG_KEY open again,
 * schedules are re-armed, and a sync cut by the stop ends as `interrupted`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeTracker, type FakeTracker } from '../fakes/tracker/server.js';

describe('sources across a restart', () => {
  let tracker: FakeTracker;
  let dataDir: string;
  let env: Record<string, string>;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    tracker = await startFakeTracker();
    dataDir = mkdtempSync(join(tmpdir(), 'sources-restart-'));
    const pluginsFile = join(dataDir, 'plugins.json');
    writeFileSync(pluginsFile, JSON.stringify({ plugins: [fileURLToPath(new URL('../fixtures/connectors/tracker-plugin.ts', import.meta.url))] }));
    env = { PLUGINS_FILE: pluginsFile, SOURCE_CONFIG_KEY: 'k'.repeat(40), JWT_SECRET: 'j'.repeat(40) };
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await tracker?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (overrides: Record<string, string> = {}): Promise<TestServer> => {
    const server = await startTestServer({ ...env, ...overrides }, { dataDir });
    servers.push(server);
    return server;
  };

  it('keeps configs, re-arms schedules, and ends a cut sync as interrupted', async () => {
    const first = await start();
    const alice = await first.register('Restart Org');
    const created = await first.request('POST', '/sources', {
      token: alice.token,
      body: { name: 'Tracker', connector: 'tracker', config: { base_url: tracker.url, token: 'good-token', project: 'web' }, schedule: '0 6 * * *' },
    });
    expect(created.status).toBe(201);
    const release = tracker.hold();
    const started = await first.request('POST', `/sources/${created.body.id}/sync`, { token: alice.token });
    expect(started.status).toBe(202);
    await first.stop();
    servers.pop();
    release();

    const second = await start();
    expect(second.service.services.sourceService.scheduledSources).toBe(1);
    const login = await second.request('POST', '/auth/login', { body: { email: alice.email, password: alice.password } });
    const token = login.body.token as string;
    const job = await second.request('GET', `/sources/${created.body.id}/jobs/${started.body.id}`, { token });
    expect(job.body).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    expect(job.body.finished_at).not.toBeNull();
    const source = await second.request('GET', `/sources/${created.body.id}`, { token });
    expect(source.body).toMatchObject({ status: 'failed', last_error: { code: 'interrupted' }, config: { token: '********' } });
    // the sealed config opens with the same key: validation reaches the tracker with the stored token
    expect((await second.request('GET', `/sources/${created.body.id}/test`, { token })).status).toBe(200);
    await second.stop();
    servers.pop();

    // another key cannot open it: the source says so instead of failing the list
    const third = await start({ SOURCE_CONFIG_KEY: 'z'.repeat(40) });
    const again = await third.request('POST', '/auth/login', { body: { email: alice.email, password: alice.password } });
    const listed = await third.request('GET', '/sources', { token: again.body.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items[0].config).toHaveProperty('unreadable');
  });
});
