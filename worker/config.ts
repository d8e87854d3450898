/**
 * The worker process's settings: flags `--queues a,b`, `--slots n`,
 * `--handlers <module>` (extra job handlers, e.g. a test's) and the
 * environment `SERVICE_API_URL` (the gateway, including /api/v1) and
 * `WORKER_TOKEN`, `EGRESS_ALLOW`. A bad value stops the start naming it (exit code 2).
 */
import { QUEUE_NAMES, type QueueName } from '../runtime/jobs/queue.js';
import { parseEgressAllow } from '../runtime/net/egress.js';

export interface WorkerConfig {
  readonly apiUrl: string;
  readonly token: string;
  readonly queues: readonly QueueName[];
  readonly slots: number;
  readonly name: string | null;
  readonly handlerModules: readonly string[];
  /** `EGRESS_ALLOW`, as the gateway reads it: exceptions to the egress guard for an organization's own LLM endpoint */
  readonly egressAllow: readonly string[];
}

export class WorkerConfigError extends Error {}

function flag(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(`--${name}`);
  if (index >= 0) return argv[index + 1];
  const inline = argv.find((arg) => arg.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}

export function loadWorkerConfig(argv: readonly string[], env: NodeJS.ProcessEnv): WorkerConfig {
  const apiUrl = env['SERVICE_API_URL']?.replace(/\/+$/, '') ?? '';
  if (!/^https?:\/\//.test(apiUrl)) throw new WorkerConfigError('SERVICE_API_URL must be the gateway URL including /api/v1');
  const token = env['WORKER_TOKEN'] ?? '';
  if (token.length < 16) throw new WorkerConfigError('WORKER_TOKEN must be set (at least 16 characters)');
  const queues = (flag(argv, 'queues') ?? 'agent').split(',').map((queue) => queue.trim());
  for (const queue of queues) {
    if (!(QUEUE_NAMES as readonly string[]).includes(queue)) throw new WorkerConfigError(`--queues: unknown queue "${queue}" (${QUEUE_NAMES.join(', ')})`);
  }
  const slotsText = flag(argv, 'slots') ?? '1';
  const slots = /^\d+$/.test(slotsText) ? Number(slotsText) : NaN;
  if (!(slots >= 1 && slots <= 64)) throw new WorkerConfigError('--slots must be a whole number from 1 to 64');
  const handlerModules = argv.flatMap((arg, index) => (arg === '--handlers' && argv[index + 1] ? [argv[index + 1] as string] : []));
  const egressAllow = (env['EGRESS_ALLOW'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    parseEgressAllow(egressAllow);
  } catch (error) {
    throw new WorkerConfigError(`EGRESS_ALLOW: ${(error as Error).message}`);
  }
  return { apiUrl, token, queues: queues as QueueName[], slots, name: flag(argv, 'name') ?? null, handlerModules, egressAllow };
}
