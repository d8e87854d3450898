/** What a worker does with a job of a kind: a handler per `kind`, returning the job's result. */
import type { ClaimedJob, WorkerClient } from './client.js';

export interface JobContext {
  readonly workerId: string;
  readonly client: WorkerClient;
  /** aborted when the lease is lost or the process stops hard: stop, and cause nothing more */
  readonly signal: AbortSignal;
  log(fields: Record<string, unknown>, message: string): void;
}

export type JobHandler = (job: ClaimedJob, context: JobContext) => Promise<Record<string, unknown>>;

export type HandlerTable = Readonly<Record<string, JobHandler>>;

/** loads extra handlers from modules exporting `handlers` (a test's, or an operator's own kinds) */
export async function loadHandlerModules(modules: readonly string[], base: HandlerTable): Promise<HandlerTable> {
  let table: Record<string, JobHandler> = { ...base };
  for (const path of modules) {
    const loaded = (await import(path)) as { handlers?: HandlerTable };
    if (!loaded.handlers) throw new Error(`${path} exports no "handlers"`);
    table = { ...table, ...loaded.handlers };
  }
  return table;
}
