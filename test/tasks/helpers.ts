/** Shared by the task and hook suites: a server on an injected clock, task creation, polling for stored state. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { startService } from '../../gateway/app.js';
import { loadConfig } from '../../runtime/config.js';
import { createLogger } from '../../runtime/logger.js';
import type { RuntimeClock } from '../../runtime/supervisor.js';
import { request, type Session, type TestServer } from '../helpers/server.js';

/** XState's simulated clock: time moves only when the test moves it. */
export function simulatedClock(startIso: string): SimulatedClock & RuntimeClock {
  const clock = new SimulatedClock();
  clock.set(Date.parse(startIso));
  return clock;
}

/**
 * `startTestServer` with the runtime clock injected: cron fires, run timeouts
 * and the retention sweep follow `clock`. The same data dir can be started
 * again to test a restart.
 */
export async function startClockedServer(
  clock: RuntimeClock,
  env: Record<string, string> = {},
  options: { dataDir?: string; jwtSecret?: string } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-task-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    JWT_SECRET: options.jwtSecret ?? randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    // the suites' fakes listen on loopback (as in startTestServer)
    EGRESS_ALLOW: '127.0.0.1,::1',
    ...env,
  });
  const service = await startService(config, createLogger(config), { clock });
  let counter = 0;
  const server: TestServer = {
    url: service.url,
    dataDir,
    service,
    request: (method, path, requestOptions) => request(service.url, method, path, requestOptions),
    register: async () => {
      counter += 1;
      const email = `task-owner${counter}-${randomBytes(4).toString('hex')}@example.test`;
      const password = 'correct horse battery staple';
      const response = await server.request('POST', '/auth/register', { body: { email, password, organization_name: `Task org ${counter}` } });
      if (response.status !== 201) throw new Error(`register failed: ${response.status} ${response.text}`);
      return { ...(response.body as Omit<Session, 'email' | 'password'>), email, password };
    },
    stop: async () => {
      await service.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Re-reads until `check` returns a value (not undefined); fails after `attempts` reads 20 ms apart. */
export async function eventually<T>(read: () => Promise<T | undefined>, what: string, attempts = 250): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

export async function createTask(server: TestServer, session: Session, body: Record<string, unknown>): Promise<any> {
  const created = await server.request('POST', '/tasks', { token: session.token, body });
  if (created.status !== 201) throw new Error(`create task: ${created.status} ${created.text}`);
  return created.body;
}

export async function runsOf(server: TestServer, session: Session, taskId: string): Promise<any[]> {
  const runs = await server.request('GET', `/tasks/${taskId}/runs?limit=200`, { token: session.token });
  if (runs.status !== 200) throw new Error(`runs: ${runs.status} ${runs.text}`);
  return runs.body.items as any[];
}

/** Waits until the run has the status. */
export function runReaches(server: TestServer, session: Session, taskId: string, runId: string, status: string): Promise<any> {
  return eventually(async () => {
    const run = await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: session.token });
    return run.body?.status === status ? run.body : undefined;
  }, `run ${runId} to be ${status}`);
}

/** The path of a trigger url, relative to /api/v1. */
export const hookPath = (url: string): string => url.slice(url.indexOf('/api/v1') + '/api/v1'.length);
