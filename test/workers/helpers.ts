/** Spawns `worker.ts` as a real child process (as `npm run worker` does) and reads its JSON log lines. */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { eventually } from '../helpers/eventually.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** the gateway's claim step (domains/workers/service.ts) */
const CLAIM_STEP_MS = 1_000;
export const TEST_HANDLERS = fileURLToPath(new URL('./fixtures/handlers.ts', import.meta.url));
/**
 * One token per test file (each file loads this module afresh): a worker process some other run left
 * behind (a test runner killed mid-file) cannot join this file's servers when one of them gets its old
 * port, and steal their jobs
 */
export const WORKER_TOKEN = `worker-token-for-tests-${randomBytes(12).toString('hex')}`;

/** workers on with a short lease (2 s), on NATS when the run names one (NATS_URL), else the in-process queue */
export const WORKERS_ENV: Record<string, string> = {
  SERVICE_FEATURES_WORKERS: 'true',
  WORKER_TOKEN,
  WORKER_LEASE_TTL: '2',
  // on NATS, streams of this suite's own (the server outlives the run; counts of other suites would show)
  ...(process.env['NATS_URL'] ? { NATS_URL: process.env['NATS_URL'], NATS_STREAM_PREFIX: `t${randomBytes(4).toString('hex')}` } : {}),
};

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly logs: Record<string, unknown>[];
  readonly exited: Promise<number | null>;
  /** the first log line with this message (and these fields), once it is written */
  logged(msg: string, fields?: Record<string, unknown>, timeout?: number): Promise<Record<string, unknown>>;
  /** SIGKILL unless it already exited */
  kill(): Promise<void>;
}

export function startWorker(apiUrl: string, args: readonly string[], env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', SERVICE_API_URL: apiUrl, WORKER_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  });
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve((code = exitCode))));
  return {
    child,
    logs,
    exited,
    logged: (msg, fields = {}, timeout = 45_000) =>
      eventually(() => logs.find((entry) => entry['msg'] === msg && Object.entries(fields).every(([key, value]) => entry[key] === value)), {
        what: `worker log "${msg}" ${JSON.stringify(fields)} (stderr: ${stderr.slice(-500)})`,
        timeout,
      }),
    kill: async () => {
      if (code === undefined && child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
        // a claim the worker left waiting in the gateway ends at its next step (domains/workers/service.ts, 1 s);
        // a job enqueued before that is leased to it and given back at once, a delivery the next test would see
        await new Promise((resolve) => setTimeout(resolve, CLAIM_STEP_MS + 200));
      }
    },
  };
}
