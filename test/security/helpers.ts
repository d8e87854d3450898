/** The real service started with a logger writing into memory, so a suite can read every log line. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../gateway/app.js';
import { loadConfig } from '../../runtime/config.js';
import { createLogger } from '../../runtime/logger.js';
import { request, type Session, type TestServer } from '../helpers/server.js';

export interface LoggedServer extends TestServer {
  /** every log line written so far, as written */
  readonly lines: string[];
}

export async function startLoggedServer(env: Record<string, string> = {}, options: { dataDir?: string; jwtSecret?: string } = {}): Promise<LoggedServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-security-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    JWT_SECRET: options.jwtSecret ?? randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    ...env,
  });
  const lines: string[] = [];
  const logger = createLogger(config, { write: (line: string) => void lines.push(line) });
  const service = await startService(config, logger);
  let counter = 0;
  const server: LoggedServer = {
    url: service.url,
    dataDir,
    service,
    lines,
    request: (method, path, requestOptions) => request(service.url, method, path, requestOptions),
    register: async () => {
      counter += 1;
      const email = `security${counter}-${randomBytes(4).toString('hex')}@example.test`;
      const password = 'correct horse battery staple';
      const response = await server.request('POST', '/auth/register', { body: { email, password, organization_name: `Security org ${counter}` } });
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

/** the path of a task's trigger url under /api/v1 */
export const hookPathOf = (url: string): string => new URL(url).pathname.replace(/^\/api\/v1/, '');
