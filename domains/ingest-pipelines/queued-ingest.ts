/**
 * Large ingest bodies on the `ingest` queue (feature `workers`).
 *
 * A body of at least `INGEST_WORKER_MIN_BYTES` is not written while its
 * request waits: it is spooled to `DATA_DIR/ingest-queue/<job id>.ndjson`
 * (with the job's spec beside it, `<job id>.json`), a run is recorded
 * `pending` in the engine's ledger naming the job, and a job of kind
 * `ingest_body` goes on queue `ingest`; the caller gets 202 `{run_id,
 * status: "queued"}`. With no live worker serving `ingest` the request is
 * refused with 503 `worker_unavailable` before anything is spooled or recorded.
 *
 * The worker holding the job reads the spooled bytes with its fence
 * (`GET /workers/jobs/:id/ingest-body`), validates and normalizes them, and
 * sends the rows back (`POST /workers/jobs/:id/ingest-rows`). DuckDB is
 * embedded and single-process, so only the gateway writes: behind the fence
 * (stale: 409 `lease_lost` before anything is written), the rows and the end
 * of the run commit in one transaction, and a run that already ended writes
 * nothing, so a job delivered twice writes its rows once. A body the worker
 * refused (`{failure}` result), or a job that ran out of deliveries, ends the
 * run `failed`. A start reconciles the runs still pending with the queue: a
 * job the queue no longer knows (the in-process queue forgets at a restart)
 * is enqueued again from its spool, under the same id.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { createReadStream, type ReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import type { IngestWriter } from '../../ingest/ingest-writer.js';
import type { QueuedRunState } from '../../ingest/ledger.js';
import type { TargetTable } from '../../ingest/table-catalog.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { sha256Hex } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../runtime/file-modes.js';
import type { JobInfo, JobSpec } from '../../runtime/jobs/queue.js';
import { asOrgId } from '../../runtime/store/types.js';
import type { WorkerService } from '../workers/service.js';
import type { AdmittedIngest, IngestIntake, IngestOptions } from './intake.js';

export const INGEST_BODY_KIND = 'ingest_body';

/** the 202 answer of a queued body */
export interface QueuedAnswer {
  readonly run_id: number;
  readonly status: 'queued';
  /** a retry with the Idempotency-Key of a run still queued */
  readonly replayed: boolean;
}

interface Dependencies {
  readonly workers: WorkerService;
  readonly writer: () => IngestWriter | null;
  readonly intake: IngestIntake;
  /** `DATA_DIR/ingest-queue` */
  readonly spoolDir: string;
  /** `INGEST_WORKER_MIN_BYTES`; null while feature `workers` is off (nothing is queued) */
  readonly minBytes: number | null;
  /** `MAX_JSON_DEPTH`, for the worker's line check */
  readonly maxJsonDepth: number;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
}

/** what the job carries: ids and the request's options, never the bytes (JetStream persists payloads) */
interface IngestJobPayload {
  readonly run_id: number;
  readonly pipeline_id: string;
  readonly token_id: string;
  readonly realm: string;
  readonly table: TargetTable;
  readonly key_field: string | null;
  readonly bytes: number;
  readonly request_hash: string;
  readonly auto_create: boolean;
  readonly schema_evolve: boolean;
  readonly idempotency_key: string | null;
  readonly arrival: string;
  readonly max_depth: number;
}

export class QueuedIngest {
  /** one enqueue per pipeline and Idempotency-Key at a time */
  private readonly keyChains = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: Dependencies) {
    mkdirSync(deps.spoolDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  }

  /** whether a body this large goes to a worker */
  applies(bytes: number): boolean {
    return this.deps.minBytes !== null && bytes >= this.deps.minBytes;
  }

  /**
   * Spools the body, records the run `pending` and enqueues its job. Null when
   * the Idempotency-Key is already committed: the synchronous path answers
   * that replay. 503 `worker_unavailable` (nothing spooled) without a live
   * worker on `ingest`.
   */
  async enqueue(target: AdmittedIngest, options: IngestOptions): Promise<QueuedAnswer | null> {
    this.deps.workers.requireWorkerFor('ingest');
    const key = options.idempotencyKey;
    if (key === null) return this.spoolAndEnqueue(target, options);
    return this.serialized(`${target.pipelineId}\n${key}`, async () => {
      const requestHash = hashOf(target, options);
      const seen = await this.writer().queuedKey(target.orgId, target.pipelineId, key, target.arrival);
      if (seen.committed) return null;
      if (seen.pending?.job_id) {
        const job = await this.deps.workers.queue.get(seen.pending.job_id);
        if (job && job.payload['request_hash'] !== requestHash) {
          throw new ServiceError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body', { run_id: seen.pending.run_id });
        }
        return { run_id: seen.pending.run_id, status: 'queued', replayed: true };
      }
      return this.spoolAndEnqueue(target, options);
    });
  }

  /** the spooled body of a leased job (for the worker holding `fence`); 409 `lease_lost` when stale */
  async body(jobId: string, fence: string): Promise<{ readonly stream: ReadStream; readonly size: number }> {
    await this.leased(jobId, fence);
    const file = this.spoolFile(jobId);
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      throw new ServiceError('not_found', `the body of job ${jobId} is no longer spooled (its run ended)`);
    }
    return { stream: createReadStream(file), size };
  }

  /** the rows a worker normalized, written behind its fence (once per run); the run as it is after */
  async write(jobId: string, fence: string, rows: Buffer): Promise<QueuedRunState> {
    const job = await this.leased(jobId, fence);
    const payload = job.payload as unknown as IngestJobPayload;
    const target: AdmittedIngest = {
      orgId: asOrgId(job.orgId),
      pipelineId: payload.pipeline_id,
      tokenId: payload.token_id,
      realm: payload.realm,
      table: payload.table,
      keyField: payload.key_field,
      body: rows,
      arrival: new Date(payload.arrival),
    };
    const options: IngestOptions = { autoCreate: payload.auto_create, schemaEvolve: payload.schema_evolve, idempotencyKey: payload.idempotency_key };
    const { run } = await this.deps.intake.writeQueued(target, options, payload.run_id, payload.request_hash);
    return run;
  }

  /**
   * What a completed `ingest_body` job applies (once: only the current fence
   * completes): a body the worker refused ends its run failed; the spool goes.
   */
  readonly onComplete = async (job: JobInfo): Promise<void> => {
    const failure = job.result?.['failure'];
    if (failure && typeof failure === 'object') {
      const { code, message } = failure as { code?: unknown; message?: unknown };
      await this.end(job, {
        code: typeof code === 'string' ? code : 'bad_ndjson',
        message: typeof message === 'string' ? message : 'the worker refused the body',
      });
    }
    await this.removeSpool(job.id);
  };

  /**
   * At start: every run still pending is matched with its job. A job the queue
   * no longer knows is enqueued again from its spool (same id); a job settled
   * while no process watched it ends its run; the others are watched.
   * Spools of runs that ended are removed.
   */
  async reconcile(): Promise<void> {
    const writer = this.deps.writer();
    if (!writer) return;
    let pending: QueuedRunState[];
    try {
      pending = await writer.pendingRuns();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'queued ingest runs could not be read; they are reconciled at the next start');
      return;
    }
    const kept = new Set<string>();
    for (const run of pending) {
      if (run.job_id === null) continue;
      kept.add(run.job_id);
      const job = await this.deps.workers.queue.get(run.job_id);
      if (job) {
        await this.settledOrWatched(job, run.run_id);
        continue;
      }
      const spec = await this.readSpec(run.job_id);
      if (!spec) {
        await writer.failQueued(run.run_id, { code: 'internal_error', message: 'the queued body was lost before a worker took it' });
        continue;
      }
      await this.deps.workers.queue.enqueue(spec);
      this.watch(spec.id, run.run_id);
    }
    for (const name of readdirSync(this.deps.spoolDir)) {
      const jobId = name.replace(/\.(ndjson|json)$/, '');
      if (!kept.has(jobId)) await unlink(join(this.deps.spoolDir, name)).catch(() => undefined);
    }
    if (pending.length > 0) this.deps.logger.info({ runs: pending.length }, 'queued ingest runs reconciled with the job queue');
  }

  private async spoolAndEnqueue(target: AdmittedIngest, options: IngestOptions): Promise<QueuedAnswer> {
    const writer = this.writer();
    const jobId = `ing_${ulid(this.deps.clock.now())}`;
    await writeFile(this.spoolFile(jobId), target.body, { mode: PRIVATE_FILE_MODE });
    let runId: number | null = null;
    try {
      runId = await writer.recordQueued({ ...target, ...options }, jobId);
      const payload: IngestJobPayload = {
        run_id: runId,
        pipeline_id: target.pipelineId,
        token_id: target.tokenId,
        realm: target.realm,
        table: target.table,
        key_field: target.keyField,
        bytes: target.body.length,
        request_hash: hashOf(target, options),
        auto_create: options.autoCreate,
        schema_evolve: options.schemaEvolve,
        idempotency_key: options.idempotencyKey,
        arrival: target.arrival.toISOString(),
        max_depth: this.deps.maxJsonDepth,
      };
      const spec: JobSpec = { id: jobId, queue: 'ingest', orgId: target.orgId, kind: INGEST_BODY_KIND, payload: { ...payload } };
      await writeFile(this.specFile(jobId), JSON.stringify(spec), { mode: PRIVATE_FILE_MODE });
      await this.deps.workers.queue.enqueue(spec);
    } catch (error) {
      if (runId !== null) await writer.failQueued(runId, { code: 'internal_error', message: 'the body could not be queued for a worker' }).catch(() => false);
      await this.removeSpool(jobId);
      throw error;
    }
    this.watch(jobId, runId);
    return { run_id: runId, status: 'queued', replayed: false };
  }

  /** a job that ran out of deliveries ends its run failed (the queue settles it without a completion) */
  private watch(jobId: string, runId: number): void {
    this.deps.workers.queue.settled(jobId).then(
      (job) => this.settledOrWatched(job, runId),
      () => undefined, // the queue closed: the next start reconciles
    );
  }

  private async settledOrWatched(job: JobInfo, runId: number): Promise<void> {
    if (job.state === 'pending' || job.state === 'leased') return this.watch(job.id, runId);
    if (job.state === 'dead') {
      await this.end(job, {
        code: 'internal_error',
        message: `the ingest job failed on each of its ${job.deliveries} deliveries: ${job.error ?? 'no error given'}`,
      });
    } else {
      await this.onComplete(job);
      // a job completed without the worker writing its rows (a result the gateway never saw applied) ends failed
      await this.end(job, { code: 'internal_error', message: 'the ingest job ended without its rows being written' });
    }
    await this.removeSpool(job.id);
  }

  private async end(job: JobInfo, failure: { readonly code: string; readonly message: string }): Promise<void> {
    const runId = Number(job.payload['run_id']);
    const writer = this.deps.writer();
    if (!writer || !Number.isSafeInteger(runId)) return;
    await writer.failQueued(runId, failure).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, run_id: runId }, 'a queued ingest run could not be ended; it is reconciled at the next start');
    });
  }

  private async leased(jobId: string, fence: string): Promise<JobInfo> {
    const job = await this.deps.workers.requireLease(jobId, fence);
    if (job.kind !== INGEST_BODY_KIND) throw new ServiceError('not_found', `job ${jobId} is not an ingest body`);
    return job;
  }

  private async readSpec(jobId: string): Promise<JobSpec | null> {
    try {
      statSync(this.spoolFile(jobId));
      return JSON.parse(await readFile(this.specFile(jobId), 'utf8')) as JobSpec;
    } catch {
      return null;
    }
  }

  private async removeSpool(jobId: string): Promise<void> {
    await unlink(this.spoolFile(jobId)).catch(() => undefined);
    await unlink(this.specFile(jobId)).catch(() => undefined);
  }

  private spoolFile(jobId: string): string {
    return join(this.deps.spoolDir, `${safeName(jobId)}.ndjson`);
  }

  private specFile(jobId: string): string {
    return join(this.deps.spoolDir, `${safeName(jobId)}.json`);
  }

  private writer(): IngestWriter {
    const writer = this.deps.writer();
    if (!writer) throw new ServiceError('engine_unavailable', 'the context tables engine is not open');
    return writer;
  }

  private serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.keyChains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.keyChains.set(key, next);
    void next
      .finally(() => {
        if (this.keyChains.get(key) === next) this.keyChains.delete(key);
      })
      .catch(() => undefined);
    return next;
  }
}

/** a job id as a file name: ours are `ing_<ulid>`; anything else cannot leave the folder */
const safeName = (jobId: string): string => jobId.replace(/[^A-Za-z0-9_-]/g, '_');

const hashOf = (target: AdmittedIngest, options: IngestOptions): string =>
  `${options.autoCreate ? 1 : 0}${options.schemaEvolve ? 1 : 0}:${sha256Hex(target.body)}`;
