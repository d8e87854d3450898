/**
 * The worker process: `npm run worker -- --queues agent,ingest [--slots n]`
 * (`node --import tsx worker.ts ...` from the sources). It reaches the gateway
 * at `SERVICE_API_URL` with `WORKER_TOKEN`; see worker/README.md.
 */
import { WorkerClient } from './worker/client.js';
import { loadWorkerConfig, WorkerConfigError } from './worker/config.js';
import { builtinHandlers } from './worker/builtin-handlers.js';
import { loadHandlerModules } from './worker/handlers.js';
import { WorkerLoop } from './worker/run.js';
import { isoAt, systemClock } from './runtime/clock.js';

const log = (fields: Record<string, unknown>, msg: string): void => {
  process.stdout.write(JSON.stringify({ time: isoAt(systemClock.now()), msg, ...fields }) + '\n');
};

async function main(): Promise<void> {
  let config;
  try {
    config = loadWorkerConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof WorkerConfigError) {
      process.stderr.write(`worker: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const handlers = await loadHandlerModules(config.handlerModules, builtinHandlers(config));
  const loop = new WorkerLoop(config, new WorkerClient(config.apiUrl, config.token), handlers, log);
  const stop = (): void => {
    log({}, 'stopping: draining jobs in hand');
    loop.stop();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await loop.run();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log({ err: String(error) }, 'worker stopped on an error');
    process.exit(1);
  },
);
