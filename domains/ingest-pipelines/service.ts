/**
 * Ingest pipelines (`/context/pipelines`): a pipeline names its realm and its
 * target table; its tokens (plaintext answered once, stored as sha256, signing
 * secret sealed; many per pipeline, each revocable) are the credentials of
 * the NDJSON webhook; its runs are the engine's ledger. The engine itself
 * (tables, schema growth, the writer) is `ingest/`.
 */
import type { Collections } from '../collections.js';
import type { ContextTables } from '../../ingest/context-tables.js';
import type { GraphOutcome } from '../../ingest/graph-ledger.js';
import type { RunPage, RunRecord } from '../../ingest/ledger.js';
import type { TargetTable } from '../../ingest/table-catalog.js';
import { newIngestToken, newSigningSecret, type SigningSecrets } from '../../ingest/tokens.js';
import type { ContextPipelineDoc, IngestTokenDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId, nowIso } from '../../runtime/ids.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { ListOptions, OrgId, Page } from '../../runtime/store/types.js';

export type { ContextPipelineDoc, IngestTokenDoc };

export interface PipelineCreate {
  readonly name: string;
  readonly kind: ContextPipelineDoc['kind'];
  readonly target_table: TargetTable;
  readonly realm: string;
  readonly require_signature: boolean;
  readonly key_field: string | null;
}

/** a field left out keeps its stored value; `kind` is accepted only to be refused when it changes */
export interface PipelinePatch {
  readonly name?: string | undefined;
  readonly kind?: string | undefined;
  readonly target_table?: TargetTable | undefined;
  readonly realm?: string | undefined;
  readonly require_signature?: boolean | undefined;
  readonly key_field?: string | null | undefined;
}

/** a run as listed: `graph` for a run of a `context_nodes` pipeline (what its realm's graph took, or still owes) */
export type ListedRun = RunRecord & { readonly graph: (GraphOutcome & { readonly status: 'done' }) | { readonly status: 'pending' } | null };

/** a new token: its record, and the plaintext token and signing secret (answered only now) */
export interface IssuedToken {
  readonly record: IngestTokenDoc;
  readonly token: string;
  readonly signing_secret: string;
}

export class IngestPipelineService {
  constructor(
    private readonly collections: Pick<Collections, 'contextPipelines' | 'ingestTokens' | 'realms'>,
    private readonly contextTables: Pick<ContextTables, 'listRuns' | 'graphLedger'>,
    private readonly signingSecrets: SigningSecrets,
  ) {}

  list(org: OrgId, options: ListOptions): Promise<Page<ContextPipelineDoc>> {
    return this.collections.contextPipelines.list(org, options);
  }

  async create(org: OrgId, createdBy: string, body: PipelineCreate): Promise<ContextPipelineDoc> {
    await this.requireRealm(org, body.realm);
    return unique('pipeline', () =>
      this.collections.contextPipelines.insert(org, {
        name: body.name,
        kind: body.kind,
        target_table: body.target_table,
        realm: body.realm,
        require_signature: body.require_signature,
        key_field: body.key_field,
        created_by: createdBy,
      }),
    );
  }

  get(org: OrgId, id: string): Promise<ContextPipelineDoc> {
    return getOr404(this.collections.contextPipelines, org, id, 'pipeline');
  }

  /** kind is fixed; a new realm must exist */
  async update(org: OrgId, id: string, body: PipelinePatch): Promise<ContextPipelineDoc> {
    const pipeline = await this.get(org, id);
    rejectImmutable(pipeline, body, ['kind']);
    if (body.realm !== undefined) await this.requireRealm(org, body.realm);
    const { kind: _kind, ...patch } = body;
    const updated = await unique('pipeline', () => this.collections.contextPipelines.update(org, pipeline.id, patch));
    if (!updated) throw new ServiceError('not_found', `pipeline ${id} not found`);
    return updated;
  }

  /** the pipeline and its tokens (its tables and rows stay) */
  async delete(org: OrgId, id: string): Promise<void> {
    const pipeline = await this.get(org, id);
    await this.collections.ingestTokens.deleteWhere(org, { pipeline_id: pipeline.id });
    await this.collections.contextPipelines.delete(org, pipeline.id);
  }

  /** a new token of the pipeline; without `signingSecret`, one is generated */
  async issueToken(org: OrgId, id: string, createdBy: string, signingSecret: string | undefined): Promise<IssuedToken> {
    const pipeline = await this.get(org, id);
    const fresh = newIngestToken();
    const secret = signingSecret ?? newSigningSecret();
    const tokenId = newId('itk');
    const record = await this.collections.ingestTokens.insert(org, {
      id: tokenId,
      pipeline_id: pipeline.id,
      token_hash: fresh.hash,
      token_prefix: fresh.prefix,
      signing_secret_sealed: this.signingSecrets.seal({ org_id: org, pipeline_id: pipeline.id, id: tokenId }, secret),
      created_by: createdBy,
      revoked_at: null,
    });
    return { record, token: fresh.token, signing_secret: secret };
  }

  async tokens(org: OrgId, id: string, options: ListOptions): Promise<Page<IngestTokenDoc>> {
    const pipeline = await this.get(org, id);
    return this.collections.ingestTokens.list(org, { ...options, filter: { ...options.filter, pipeline_id: pipeline.id } });
  }

  /** revokes one token (the others keep working); revoking twice is fine */
  async revokeToken(org: OrgId, id: string, tokenId: string): Promise<void> {
    const pipeline = await this.get(org, id);
    const token = await this.collections.ingestTokens.get(org, tokenId);
    if (!token || token.pipeline_id !== pipeline.id) throw new ServiceError('not_found', `token ${tokenId} not found`);
    if (token.revoked_at === null) await this.collections.ingestTokens.update(org, token.id, { revoked_at: nowIso() });
  }

  /** the pipeline's ingest runs, newest first, before run `before` */
  async runs(org: OrgId, id: string, limit: number, before: number | null): Promise<Omit<RunPage, 'items'> & { items: ListedRun[] }> {
    const pipeline = await this.get(org, id);
    const page = await this.contextTables.listRuns(org, pipeline.id, limit, before);
    const graph = await this.contextTables.graphLedger.outcomes(
      org,
      page.items.map((run) => run.run_id),
    );
    const items = page.items.map((run): ListedRun => {
      const outcome = graph.get(run.run_id);
      return { ...run, graph: outcome === undefined ? null : outcome === 'pending' ? { status: 'pending' } : { status: 'done', ...outcome } };
    });
    return { ...page, items };
  }

  private async requireRealm(org: OrgId, realm: string): Promise<void> {
    if (!(await this.collections.realms.findOne(org, { name: realm }))) {
      throw new ServiceError('validation_error', `invalid body: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    }
  }
}
