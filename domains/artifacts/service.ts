/**
 * Artifacts: the files agent runs wrote, across runs. They live in the file store under
 * `artifacts/<run id>/<name>`; the id is derived from that path (runtime/files/artifacts.ts), so no
 * index is kept beside the files.
 */
import type { ReadStream } from 'node:fs';
import type { Collections } from '../collections.js';
import type { AgentRunDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { listAllArtifacts, parseArtifactId, type ArtifactRef } from '../../runtime/files/artifacts.js';
import type { FileInfo, FileStore } from '../../runtime/files/store.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface ArtifactFilter {
  readonly run_id?: string | undefined;
  readonly task_id?: string | undefined;
  /** a prefix: `image/` matches every image */
  readonly content_type?: string | undefined;
  readonly created_after?: string | undefined;
}

/** an artifact with the run that wrote it (undefined when no longer on record) */
export interface Artifact {
  readonly file: FileInfo;
  readonly ref: ArtifactRef;
  readonly run: AgentRunDoc | undefined;
}

export class ArtifactService {
  constructor(
    private readonly collections: Pick<Collections, 'agentRuns'>,
    private readonly files: FileStore,
  ) {}

  /** every artifact the filter keeps, ordered by path, oldest run first; `after` is the last path of the previous page */
  async list(
    org: OrgId,
    filter: ArtifactFilter,
    limit: number,
    after: string | null,
  ): Promise<{ readonly items: Artifact[]; readonly more: boolean; readonly total: number }> {
    let runIds: string[] | undefined;
    if (filter.task_id !== undefined) {
      const taskRuns = (await this.collections.agentRuns.findAll(org, { task_id: filter.task_id })).map((run) => run.id);
      runIds = filter.run_id === undefined ? taskRuns : taskRuns.filter((runId) => runId === filter.run_id);
    } else if (filter.run_id !== undefined) {
      runIds = [filter.run_id];
    }
    const createdAfter = filter.created_after === undefined ? null : Date.parse(filter.created_after);
    const all = (await listAllArtifacts(this.files, org, runIds)).filter(
      (file) =>
        (filter.content_type === undefined || file.content_type.startsWith(filter.content_type)) &&
        (createdAfter === null || Date.parse(file.modified_at) > createdAfter),
    );
    // keyset on the path: a file written or removed between pages neither repeats nor skips another
    const rest = after === null ? all : all.filter((file) => file.path > after);
    const page = rest.slice(0, limit);
    const runs = await this.runsById(
      org,
      page.map((file) => file.ref.runId),
    );
    return {
      items: page.map((file) => ({ file, ref: file.ref, run: runs.get(file.ref.runId) })),
      more: rest.length > page.length,
      total: all.length,
    };
  }

  /** one artifact with its run and the file's SHA-256 */
  async get(org: OrgId, id: string): Promise<Artifact & { readonly sha256: string }> {
    const { ref, info } = await this.find(org, id);
    const [run, sha256] = await Promise.all([this.collections.agentRuns.get(org, ref.runId), this.files.sha256(org, ref.path)]);
    return { file: info, ref, run: run ?? undefined, sha256 };
  }

  async open(org: OrgId, id: string): Promise<{ readonly ref: ArtifactRef; readonly info: FileInfo; readonly stream: ReadStream }> {
    const { ref } = await this.find(org, id);
    const { info, stream } = await this.files.open(org, ref.path);
    return { ref, info, stream };
  }

  async delete(org: OrgId, id: string): Promise<ArtifactRef> {
    const { ref } = await this.find(org, id);
    await this.files.remove(org, ref.path);
    return ref;
  }

  /** The artifact an id names in this organization, or 404 (ids of another organization's files included). */
  private async find(org: OrgId, id: string): Promise<{ ref: ArtifactRef; info: FileInfo }> {
    const ref = parseArtifactId(id);
    const notFound = new ServiceError('not_found', `artifact ${id} not found`);
    if (ref === null) throw notFound;
    try {
      return { ref, info: await this.files.info(org, ref.path) };
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found') throw notFound;
      throw error;
    }
  }

  private async runsById(org: OrgId, runIds: readonly string[]): Promise<Map<string, AgentRunDoc>> {
    const unique = [...new Set(runIds)];
    if (unique.length === 0) return new Map();
    const runs = await this.collections.agentRuns.findAll(org, { id: { in: unique } });
    return new Map(runs.map((run) => [run.id, run]));
  }
}
