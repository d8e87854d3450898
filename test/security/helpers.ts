/** The real service started with a logger writing into memory, so a suite can read every log line. */
import { startTestServer, type TestServer } from '../helpers/server.js';

export interface LoggedServer extends TestServer {
  /** every log line written so far, as written */
  readonly lines: string[];
}

export async function startLoggedServer(env: Record<string, string> = {}): Promise<LoggedServer> {
  const lines: string[] = [];
  const server = await startTestServer({ LOG_LEVEL: 'info', ...env }, { logLines: lines });
  return Object.assign(server, { lines });
}

/** the path of a task's trigger url under /api/v1 */
export const hookPathOf = (url: string): string => new URL(url).pathname.replace(/^\/api\/v1/, '');
