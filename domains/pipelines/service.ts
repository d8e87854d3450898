/**
 * Pipeline definitions (`/pipelines`) and their versions. Every create,
 * change and revert writes an immutable version record (n = the pipeline's
 * `version`); a revert copies an earlier version's content into a new one
 * (`reverted_from`), even when it equals the current content, so the history
 * says who reverted when. The version record is written before the pipeline:
 * its unique (pipeline_id, version) index makes two concurrent changes of one
 * version collide (409 `conflict`) instead of one silently losing.
 */
import type { Collections } from '../collections.js';
import type { PipelineDoc, PipelineRunDoc, PipelineVersionDoc } from './documents.js';
import type { PipelineRuns } from './runs.js';
import { ServiceError } from '../../runtime/errors.js';
import { getOr404, stripUndefined, unique } from '../../runtime/store/documents.js';
import { UniqueViolation, type OrgId } from '../../runtime/store/types.js';

export interface PipelineFields {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly realm?: string | undefined;
  readonly definition?: Record<string, unknown> | undefined;
}

export interface PipelineCreate {
  readonly name: string;
  readonly description: string | null;
  readonly realm: string;
  readonly definition: Record<string, unknown>;
}

/** who changes, why, and the version they believe is current (stale: 409) */
export interface ChangeContext {
  readonly userId: string;
  readonly message?: string | null | undefined;
  readonly expectedVersion?: number | undefined;
}

export interface VersionPage {
  readonly items: PipelineVersionDoc[];
  /** the version to continue below, or null on the last page */
  readonly nextBefore: number | null;
  readonly total: number;
}

type PipelineCollections = Pick<Collections, 'pipelines' | 'pipelineRuns' | 'pipelineVersions' | 'pipelineRunEntries'>;

export class PipelineService {
  constructor(
    private readonly collections: PipelineCollections,
    private readonly runs: PipelineRuns,
  ) {}

  /** the definitions as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['pipelines'], 'list' | 'revision'> {
    return this.collections.pipelines;
  }

  /** the runs as a read-only listing (filtered by pipeline_id) */
  get runListing(): Pick<Collections['pipelineRuns'], 'list' | 'revision'> {
    return this.collections.pipelineRuns;
  }

  get(org: OrgId, id: string): Promise<PipelineDoc> {
    return getOr404(this.collections.pipelines, org, id, 'pipeline');
  }

  async create(org: OrgId, fields: PipelineCreate, change: ChangeContext): Promise<PipelineDoc> {
    const pipeline = await unique('pipeline', () => this.collections.pipelines.insert(org, { ...fields, version: 1, created_by: change.userId }));
    await this.collections.pipelineVersions.insert(org, this.versionOf(pipeline, change, null));
    return pipeline;
  }

  /** Changes the given fields; the result is version n+1. */
  async update(org: OrgId, id: string, patch: PipelineFields, change: ChangeContext): Promise<PipelineDoc> {
    return this.retried(change, async () => {
      const existing = await this.current(org, id, change.expectedVersion);
      return this.write(org, existing, stripUndefined({ ...patch }), change, null);
    });
  }

  /** The pipeline takes version `target`'s content, recorded as version n+1 with `reverted_from`. */
  async revert(org: OrgId, id: string, target: number, change: ChangeContext): Promise<PipelineDoc> {
    return this.retried(change, async () => {
      const existing = await this.current(org, id, change.expectedVersion);
      const version = await this.version(org, existing.id, target);
      const content = { name: version.name, description: version.description, realm: version.realm, definition: version.definition };
      return this.write(org, existing, content, change, target);
    });
  }

  /** 409 while a run is running; the versions go with the pipeline (runs and their entries stay readable by id). */
  async delete(org: OrgId, id: string): Promise<void> {
    const pipeline = await this.get(org, id);
    await this.runs.settleExpired(org, pipeline.id);
    if ((await this.collections.pipelineRuns.count(org, { pipeline_id: pipeline.id, status: 'running' })) > 0) {
      throw new ServiceError('conflict', 'this pipeline has a running run: finish or cancel it first');
    }
    await this.collections.pipelines.delete(org, pipeline.id);
    await this.collections.pipelineVersions.deleteWhere(org, { pipeline_id: pipeline.id });
  }

  /** Versions newest first, below `before` (exclusive) when given. */
  async versions(org: OrgId, id: string, limit: number, before: number | null): Promise<VersionPage> {
    const pipeline = await this.get(org, id);
    const all = (await this.collections.pipelineVersions.findAll(org, { pipeline_id: pipeline.id })).sort((a, b) => b.version - a.version);
    const below = before === null ? all : all.filter((version) => version.version < before);
    const items = below.slice(0, limit);
    const last = items.at(-1);
    return { items, nextBefore: below.length > limit && last !== undefined ? last.version : null, total: all.length };
  }

  async version(org: OrgId, id: string, version: number): Promise<PipelineVersionDoc> {
    const pipeline = await this.get(org, id);
    const found = await this.collections.pipelineVersions.findOne(org, { pipeline_id: pipeline.id, version });
    if (!found) throw new ServiceError('not_found', `version ${version} of pipeline ${id} not found`, { version });
    return found;
  }

  /** A run of the pipeline in the path (404 for a run of another pipeline). */
  async run(org: OrgId, pipelineId: string, runId: string): Promise<PipelineRunDoc> {
    const run = await this.runs.get(org, runId);
    if (run.pipeline_id !== pipelineId) throw new ServiceError('not_found', `pipeline run ${runId} not found`);
    return run;
  }

  /** The pipeline (404) after its expired runs are settled, for a run listing. */
  async forRunListing(org: OrgId, id: string): Promise<PipelineDoc> {
    const pipeline = await this.get(org, id);
    await this.runs.settleExpired(org, pipeline.id);
    return pipeline;
  }

  /**
   * A change that names no expected version applies to whatever is current:
   * when another change took the next version meanwhile, it is tried again
   * on top of that one (a few times); one that names a version gets the 409.
   */
  private async retried(change: ChangeContext, attempt: () => Promise<PipelineDoc>): Promise<PipelineDoc> {
    for (let tries = 1; ; tries += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof VersionTaken) || change.expectedVersion !== undefined || tries >= MAX_ATTEMPTS) {
          throw error instanceof VersionTaken ? stale(error.version, error.version - 1) : error;
        }
      }
    }
  }

  private async current(org: OrgId, id: string, expected: number | undefined): Promise<PipelineDoc> {
    const pipeline = await this.get(org, id);
    if (expected !== undefined && expected !== pipeline.version) throw stale(pipeline.version, expected);
    return pipeline;
  }

  private async write(org: OrgId, existing: PipelineDoc, content: PipelineFields, change: ChangeContext, revertedFrom: number | null): Promise<PipelineDoc> {
    const next = { ...existing, ...content, version: existing.version + 1 };
    // a name another pipeline holds is refused before the version is taken
    if (next.name !== existing.name && (await this.collections.pipelines.findOne(org, { name: next.name }))) {
      throw new ServiceError('conflict', 'a pipeline with this name already exists', { fields: ['name'] });
    }
    let recorded: PipelineVersionDoc;
    try {
      recorded = await this.collections.pipelineVersions.insert(org, this.versionOf(next, change, revertedFrom));
    } catch (error) {
      // another change took version n+1 first
      if (error instanceof UniqueViolation) throw new VersionTaken(existing.version + 1);
      throw error;
    }
    try {
      const updated = await unique('pipeline', () =>
        this.collections.pipelines.update(org, existing.id, {
          name: next.name,
          description: next.description,
          realm: next.realm,
          definition: next.definition,
          version: next.version,
        }),
      );
      if (!updated) throw new ServiceError('not_found', `pipeline ${existing.id} not found`);
      return updated;
    } catch (error) {
      await this.collections.pipelineVersions.delete(org, recorded.id);
      throw error;
    }
  }

  private versionOf(pipeline: PipelineDoc, change: ChangeContext, revertedFrom: number | null) {
    return {
      pipeline_id: pipeline.id,
      version: pipeline.version,
      name: pipeline.name,
      description: pipeline.description,
      realm: pipeline.realm,
      definition: pipeline.definition,
      created_by: change.userId,
      message: change.message ?? null,
      reverted_from: revertedFrom,
    };
  }
}

/** tries of a change without an expected version that keeps colliding */
const MAX_ATTEMPTS = 3;

/** the version a change was about to record is taken (a concurrent change) */
class VersionTaken extends Error {
  constructor(readonly version: number) {
    super(`pipeline version ${version} is taken`);
  }
}

const stale = (current: number, expected: number): ServiceError =>
  new ServiceError('conflict', `the pipeline changed: it is at version ${current}, not ${expected}; read it again and retry`, {
    current_version: current,
    expected_version: expected,
  });
