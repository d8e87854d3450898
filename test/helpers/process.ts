/** Runs `main.ts` as a real child process, the way `npm start` does, and reads its log lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly logs: Record<string, unknown>[];
  /** resolves with the exit code */
  readonly exited: Promise<number | null>;
}

function spawnServer(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: ROOT,
    // the suites' fakes listen on loopback (as in startTestServer); a test may pass its own EGRESS_ALLOW
    env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', EGRESS_ALLOW: '127.0.0.1,::1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts the server and waits for its "listening" log line. */
export function startServerProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawnServer(env);
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // a server that never said it listens is not left running behind the failed test
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (typeof entry['url'] === 'string' && String(entry['msg']).startsWith('listening')) {
        clearTimeout(timer);
        resolve({ child, url: entry['url'], logs, exited });
      }
    });
  });
}

/** Runs the server to completion (for start-up failures) and returns exit code and stderr. */
export function runServerToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnServer(env);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}
