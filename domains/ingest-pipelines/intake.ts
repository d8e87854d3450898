/**
 * The NDJSON webhook's intake (`POST /context/ingest/webhook/:token`): the
 * token in the path is the credential; when its pipeline requires it, the HMAC
 * of the raw bytes is checked (constant time) before anything is parsed. Each
 * ingest that reached its pipeline's writer is reported to lifecycle tasks as
 * one platform event, completed or failed.
 */
import type { Logger } from 'pino';
import type { ContextTables } from '../../ingest/context-tables.js';
import type { GraphOutcome } from '../../ingest/graph-ledger.js';
import type { IngestOutcome, QueuedWrite } from '../../ingest/ingest-writer.js';
import { KeyedRwLocks } from '../../ingest/rw-lock.js';
import type { TargetTable } from '../../ingest/table-catalog.js';
import { resolveToken, type SigningSecrets } from '../../ingest/tokens.js';
import type { Collections } from '../collections.js';
import { verifyHmacSignature } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import type { PlatformEvents } from '../../runtime/events.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { EntityGraphFeed } from './entity-feed.js';

/** what an admitted request writes: its pipeline's table, with its bytes */
export interface AdmittedIngest {
  readonly orgId: OrgId;
  readonly pipelineId: string;
  readonly tokenId: string;
  readonly realm: string;
  readonly table: TargetTable;
  /** a `context_nodes` pipeline's key property (rows without `_key`) */
  readonly keyField: string | null;
  readonly body: Buffer;
  readonly arrival: Date;
}

/** how the sender asked the rows to be written (the route's headers) */
export interface IngestOptions {
  readonly autoCreate: boolean;
  readonly schemaEvolve: boolean;
  readonly idempotencyKey: string | null;
}

/** an ingest's outcome; `graph` for a `context_nodes` pipeline: what the realm's graph took */
export interface IntakeOutcome extends IngestOutcome {
  readonly graph: GraphOutcome | null;
}

export class IngestIntake {
  /** a realm's entity ingests one at a time: the graph sees the batches in the order the table committed them */
  private readonly entityLocks = new KeyedRwLocks();

  constructor(
    private readonly collections: Pick<Collections, 'contextPipelines' | 'ingestTokens'>,
    private readonly contextTables: Pick<ContextTables, 'writer'>,
    private readonly signingSecrets: SigningSecrets,
    private readonly events: Pick<PlatformEvents, 'emit'>,
    private readonly logger: Logger,
    private readonly entities: Pick<EntityGraphFeed, 'apply' | 'settle'>,
    /** auto-embed of the rows' `body` text (feature rag, setting `auto_embed_on_ingest`) */
    private readonly bodies?: { ingested(org: OrgId, batch: { realm: string; pipelineId: string; runId: string; body: Buffer }): void },
  ) {}

  /**
   * The request's pipeline, once its token resolves (401 `unknown_token`) and,
   * when the pipeline requires it, `signature` (X-Service-Signature) is the
   * HMAC of the body (401 `bad_signature`, recorded as a failed run).
   */
  async admit(token: string, body: Buffer, signature: string | undefined, arrival: Date): Promise<AdmittedIngest> {
    const resolved = await resolveToken(this.collections, token);
    if (!resolved) throw new ServiceError('unknown_token', 'this ingest token was revoked or never existed');
    const { orgId, pipeline, token: record } = resolved;
    const target: AdmittedIngest = {
      orgId,
      pipelineId: pipeline.id,
      tokenId: record.id,
      realm: pipeline.realm,
      table: pipeline.target_table,
      keyField: pipeline.key_field ?? null,
      body,
      arrival,
    };
    if (!pipeline.require_signature) return target;
    const signingSecret = this.signingSecrets.open({ ...record, org_id: orgId });
    // a secret that does not open verifies nothing (the operator hears of it: was JWT_SECRET changed?)
    if (signingSecret === null) this.logger.warn({ token_id: record.id, pipeline_id: pipeline.id }, 'an ingest signing secret does not decrypt');
    if (signingSecret === null || !verifyHmacSignature(signingSecret, body, signature)) {
      throw await this.contextTables.writer.refuse(
        target,
        new ServiceError('bad_signature', 'X-Service-Signature is missing or is not sha256=<hex HMAC-SHA256 of the body keyed by the token signing secret>'),
      );
    }
    return target;
  }

  /**
   * writes the admitted rows; answers after they are committed, and for a
   * `context_nodes` pipeline after the realm's graph holds them too
   */
  async ingest(target: AdmittedIngest, options: IngestOptions): Promise<IntakeOutcome> {
    const outcome = await this.written(target, options);
    if (this.bodies !== undefined && !outcome.replayed && outcome.rows_out > 0)
      this.bodies.ingested(target.orgId, { realm: target.realm, pipelineId: target.pipelineId, runId: String(outcome.run_id), body: target.body });
    return outcome;
  }

  private written(target: AdmittedIngest, options: IngestOptions): Promise<IntakeOutcome> {
    if (target.table !== 'context_nodes') {
      return this.reported(
        target.orgId,
        target.pipelineId,
        this.contextTables.writer.ingest({ ...target, ...options }).then((outcome) => ({ ...outcome, graph: null })),
      );
    }
    const work = this.entityLocks.with(`${target.orgId}:${target.realm}`, true, async () => {
      const outcome = await this.contextTables.writer.ingest({ ...target, ...options, graph: { keyField: target.keyField } });
      return { ...outcome, graph: await this.graphOf(target, outcome) };
    });
    return this.reported(target.orgId, target.pipelineId, work);
  }

  /**
   * The rows a worker normalized for a run queued for it (status `pending`):
   * written and the run ended in one transaction, once (a run already ended
   * writes nothing); a `context_nodes` pipeline's batch then goes into the
   * graph (or what it still owes, when another delivery ended the run). The
   * lifecycle event is emitted by the call that ended the run.
   */
  writeQueued(target: AdmittedIngest, options: IngestOptions, runId: number, requestHash: string): Promise<QueuedWrite> {
    const nodes = target.table === 'context_nodes';
    const work = async (): Promise<QueuedWrite> => {
      const write = await this.contextTables.writer.writeQueued(
        { ...target, ...options, requestHash, ...(nodes ? { graph: { keyField: target.keyField } } : {}) },
        runId,
      );
      const { run } = write;
      if (write.ended) {
        const failure = run.status === 'failed' ? { code: run.error_code ?? 'internal_error', message: run.error ?? 'ingest failed' } : {};
        this.events.emit(run.status === 'failed' ? 'ingest.failed' : 'ingest.completed', target.orgId, { pipeline_id: target.pipelineId, ...failure });
      }
      if (nodes && run.status === 'succeeded') {
        await this.graphOf(target, { rows_in: run.rows_in, rows_out: run.rows_out, run_id: runId, replayed: !write.ended });
      }
      return write;
    };
    return nodes ? this.entityLocks.with(`${target.orgId}:${target.realm}`, true, work) : work();
  }

  /** the committed batch into the graph (a replayed request: whatever is still owed) */
  private async graphOf(target: AdmittedIngest, outcome: IngestOutcome): Promise<GraphOutcome | null> {
    try {
      if (outcome.replayed) return await this.entities.settle(target.orgId, outcome.run_id);
      return await this.entities.apply({
        runId: outcome.run_id,
        orgId: target.orgId,
        pipelineId: target.pipelineId,
        realm: target.realm,
        keyField: target.keyField,
        body: target.body,
      });
    } catch (error) {
      if (error instanceof ServiceError && error.status < 500) throw error;
      this.logger.warn({ err: error, run_id: outcome.run_id, pipeline_id: target.pipelineId }, 'the graph did not take a committed entity batch');
      throw new ServiceError(
        'service_unavailable',
        'the rows are committed but the graph did not take them yet; retry with the same Idempotency-Key (the batch is also replayed at the next start)',
        { run_id: outcome.run_id, graph: 'pending' },
      );
    }
  }

  /** Lifecycle tasks hear how each ingest that reached its pipeline's writer ended: one event, completed or failed. */
  private async reported<T>(orgId: string, pipelineId: string, work: Promise<T>): Promise<T> {
    const settled = await work.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const failure = settled.ok
      ? null
      : settled.error instanceof ServiceError
        ? { code: settled.error.code, message: settled.error.message }
        : { code: 'internal_error', message: settled.error instanceof Error ? settled.error.message : 'ingest failed' };
    this.events.emit(failure ? 'ingest.failed' : 'ingest.completed', orgId, { pipeline_id: pipelineId, ...(failure ?? {}) });
    if (!settled.ok) throw settled.error instanceof Error ? settled.error : new Error('ingest failed');
    return settled.value;
  }
}
