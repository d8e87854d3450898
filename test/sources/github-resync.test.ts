/**
 * Regression (issue 15): a GitHub re-sync after a restart. The reloaded graph
 * schema named BOOLEAN columns by the engine's spelling, so every boolean
 * (`private`, `archived`) was refused after a restart, and the sync reported
 * it as "GitHub cannot be reached". A sync the graph refuses must name the
 * graph.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.js';
import { signIn, startTestServer, type TestServer } from '../helpers/server.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { syncToEnd } from './helpers.js';

describe('github re-sync across a restart', () => {
  let fake: FakeGithub;
  let dataDir: string;
  const env = { SOURCE_CONFIG_KEY: 'k'.repeat(40), JWT_SECRET: 'j'.repeat(40) };
  const servers: TestServer[] = [];

  beforeAll(async () => {
    fake = await startFakeGithub();
    seedGithub(fake);
    dataDir = mkdtempSync(join(tmpdir(), 'github-resync-'));
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (): Promise<TestServer> => {
    const server = await startTestServer(env, { dataDir });
    servers.push(server);
    return server;
  };
  const stop = async (server: TestServer): Promise<void> => {
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
  };
  const config = () => ({ auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: fake.url });

  it('syncs again after a restart, booleans included, and a graph refusal names the graph', async () => {
    const first = await start();
    const owner = await first.register('Resync Org');
    const created = await first.request('POST', '/sources', { token: owner.token, body: { name: 'GitHub', connector: 'github', config: config() } });
    expect(created.status, created.text).toBe(201);
    expect(await syncToEnd(first, owner.token, created.body.id)).toMatchObject({ status: 'succeeded' });
    await stop(first);

    const second = await start();
    const { token } = await signIn(second, owner);
    // flip a boolean the sync writes, so the re-sync writes false over true and true over false
    const repo = fake.repos.find((candidate) => candidate.owner === 'acme')!;
    repo.private = !(repo.private ?? false);
    const again = await syncToEnd(second, token, created.body.id);
    expect(again, JSON.stringify(again)).toMatchObject({ status: 'succeeded', error: null });
    const host = new URL(fake.url).host;
    const node = await second.request('GET', `/graph/nodes/${encodeURIComponent(`Repository:${host}/${repo.owner}/${repo.name}`)}`, { token });
    expect(node.status, node.text).toBe(200);
    expect(node.body.properties.private).toBe(repo.private);

    // a realm where `private` already holds integers: the graph refuses the sync's booleans
    expect((await second.request('POST', '/realms', { token, body: { name: 'typed' } })).status).toBe(201);
    const seeded = await second.request('POST', '/graph/nodes', {
      token,
      body: { realm: 'typed', nodes: [{ label: 'Repository', properties: { _key: 'x', private: 1 } }] },
    });
    expect(seeded.status, seeded.text).toBe(200);
    const typed = await second.request('POST', '/sources', { token, body: { name: 'GitHub typed', connector: 'github', realm: 'typed', config: config() } });
    expect(typed.status, typed.text).toBe(201);
    const refused = await syncToEnd(second, token, typed.body.id);
    expect(refused.status).toBe('failed');
    expect(refused.error.code).toBe('graph_write_failed');
    expect(refused.error.message).toContain('the context graph refused');
    expect(refused.error.message).not.toContain('GitHub cannot be reached');
  });
});
