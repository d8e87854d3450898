/** The server as `npm start` runs it: start-up line, config errors, clean shutdown, restarts keep data. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { request } from '../helpers/server.js';
import { runServerToExit, startServerProcess } from '../helpers/process.js';

const register = (url: string, organization: string) =>
  request(url, 'POST', '/auth/register', {
    body: { email: `${organization}@example.test`, password: 'a long enough password', organization_name: organization },
  });

describe('server process', () => {
  it('logs one structured line saying where it listens, finishes in-flight requests on SIGTERM, and keeps data across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'proc-'));
    const first = await startServerProcess({ DATA_DIR: dataDir });
    const listening = first.logs.find((entry) => String(entry['msg']).startsWith('listening'));
    expect(listening).toMatchObject({ host: '127.0.0.1', data_dir: dataDir });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);

    const registered = await register(first.url, 'keepme');
    expect(registered.status).toBe(201);
    const token = registered.body.token as string;
    expect((await request(first.url, 'POST', '/realms', { token, body: { name: 'survivor' } })).status).toBe(201);

    // a registration spends ~100 ms in scrypt: signal while it is in flight
    const inFlight = register(first.url, 'inflight');
    await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill('SIGTERM');
    expect((await inFlight).status).toBe(201);
    expect(await first.exited).toBe(0);
    expect(first.logs.some((entry) => entry['msg'] === 'stopped cleanly')).toBe(true);

    // same DATA_DIR, no JWT_SECRET: the generated secret was kept, so the old token still works
    const second = await startServerProcess({ DATA_DIR: dataDir });
    try {
      const realms = await request(second.url, 'GET', '/realms', { token });
      expect(realms.status).toBe(200);
      expect(realms.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default', 'survivor']);
      const login = await request(second.url, 'POST', '/auth/login', { body: { email: 'inflight@example.test', password: 'a long enough password' } });
      expect(login.status).toBe(200);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  });

  it('refuses to start with a bad configuration, naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'proc-'));
    const production = await runServerToExit({ DATA_DIR: dataDir, NODE_ENV: 'production' });
    expect(production.code).toBe(2);
    expect(production.stderr).toContain('JWT_SECRET: is required when NODE_ENV=production');
    const badPort = await runServerToExit({ DATA_DIR: dataDir, PORT: 'http' });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('PORT: must be an integer');
  });

  it('ends by the shutdown deadline when something never finishes closing, logging it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'proc-'));
    const pluginsFile = join(dataDir, 'plugins.json');
    writeFileSync(pluginsFile, JSON.stringify({ plugins: [fileURLToPath(new URL('../fixtures/plugins/stuck-sync-plugin.ts', import.meta.url))] }));
    const server = await startServerProcess({ DATA_DIR: dataDir, PLUGINS_FILE: pluginsFile, SHUTDOWN_GRACE_SECS: '0', SHUTDOWN_DEADLINE_SECS: '2' });
    const token = (await register(server.url, 'stuck')).body.token as string;
    const source = await request(server.url, 'POST', '/sources', { token, body: { name: 'Stuck', connector: 'stuck', config: {} } });
    expect(source.status, source.text).toBe(201);
    expect((await request(server.url, 'POST', `/sources/${source.body.id}/sync`, { token })).status).toBe(202);

    server.child.kill('SIGTERM');
    // the sync ignores its abort, so the stop never completes: only the deadline ends the process
    const ended = await Promise.race([server.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    if (ended === 'still running') server.child.kill('SIGKILL');
    expect(ended).toBe(1);
    expect(server.logs.some((entry) => entry['msg'] === 'shutdown deadline passed: exiting with work still closing')).toBe(true);
    expect(server.logs.some((entry) => entry['msg'] === 'stopped cleanly')).toBe(false);
  }, 45_000);
});
