/** Memory entries: facts, guidelines, preferences and notes agents recall, each in a realm of the organization. */
import type { Collections } from '../collections.js';
import type { MemoryDoc, MemoryKind } from './documents.js';
import { recallMemories, type RecallQuery, type RecalledMemory } from './recall.js';
import { reciprocalRankFusion } from '../../runtime/rag/fusion.js';
import { ServiceError } from '../../runtime/errors.js';
import { getOr404, stripUndefined } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface MemoryFields {
  readonly kind: MemoryKind;
  readonly realm: string;
  readonly text: string;
  readonly title?: string | null | undefined;
  readonly tags: string[];
  readonly importance: number;
}

export interface MemoryPatch {
  readonly kind?: MemoryKind | undefined;
  readonly realm?: string | undefined;
  readonly text?: string | undefined;
  readonly title?: string | null | undefined;
  readonly tags?: string[] | undefined;
  readonly importance?: number | undefined;
}

/**
 * Memory entries as vectors (domains/rag/auto-embed.ts, setting
 * `auto_embed_on_ingest`): told of every change, and asked to rank entries
 * for recall (null: no vectors, recall stays text-only).
 */
export interface MemoryVectors {
  memoryChanged(org: OrgId, entry: MemoryDoc): void;
  memoryRemoved(org: OrgId, entry: MemoryDoc): Promise<void>;
  rankMemory(org: OrgId, realms: readonly string[], query: string, limit: number): Promise<string[] | null>;
}

export class MemoryService {
  constructor(
    private readonly collections: Pick<Collections, 'memory' | 'realms'>,
    private readonly vectors?: MemoryVectors,
  ) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['memory'], 'list' | 'revision'> {
    return this.collections.memory;
  }

  async realmExists(org: OrgId, realm: string): Promise<boolean> {
    return (await this.collections.realms.findOne(org, { name: realm })) !== null;
  }

  /** 400 naming the `realm` field unless `realm` is a realm of the organization */
  async requireRealm(org: OrgId, realm: string): Promise<void> {
    if (!(await this.realmExists(org, realm))) {
      throw new ServiceError('validation_error', `invalid realm: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    }
  }

  async create(org: OrgId, createdBy: string, fields: MemoryFields): Promise<MemoryDoc> {
    await this.requireRealm(org, fields.realm);
    const created = await this.collections.memory.insert(org, {
      kind: fields.kind,
      realm: fields.realm,
      text: fields.text,
      title: fields.title ?? null,
      tags: fields.tags,
      // stored as a 32-bit float, as the provisioning contract describes it
      importance: Math.fround(fields.importance),
      created_by: createdBy,
    });
    this.vectors?.memoryChanged(org, created);
    return created;
  }

  async recall(org: OrgId, query: RecallQuery): Promise<RecalledMemory[]> {
    if (query.realm !== undefined) await this.requireRealm(org, query.realm);
    if (this.vectors === undefined) return recallMemories(this.collections.memory, org, query);
    const realms = query.realm !== undefined ? [query.realm] : (await this.collections.realms.findAll(org, {})).map((realm) => realm.name);
    const byVector = await this.vectors.rankMemory(org, realms, query.query, query.limit * 4);
    if (byVector === null) return recallMemories(this.collections.memory, org, query);
    return this.hybridRecall(org, query, byVector);
  }

  /**
   * Hybrid recall: the text ranking (store full-text x importance) and the
   * vector ranking fused by reciprocal rank, the fused score then weighted by
   * importance as text recall is (`score = rrf * (0.5 + importance)`).
   */
  private async hybridRecall(org: OrgId, query: RecallQuery, byVector: readonly string[]): Promise<RecalledMemory[]> {
    const text = await recallMemories(this.collections.memory, org, { ...query, limit: query.limit * 4 });
    const docs = new Map(text.map((hit) => [hit.doc.id, hit.doc]));
    const ids: string[] = [];
    const ordinal = (id: string): number => {
      const at = ids.indexOf(id);
      return at >= 0 ? at : ids.push(id) - 1;
    };
    const fused = reciprocalRankFusion(
      byVector.map(ordinal),
      text.map((hit) => ordinal(hit.doc.id)),
    );
    const recalled: RecalledMemory[] = [];
    for (const hit of fused) {
      const id = ids[hit.rowId] as string;
      const doc = docs.get(id) ?? (await this.collections.memory.get(org, id));
      // a vector of an entry since deleted, or of another kind than asked
      if (doc === null || (query.kind !== undefined && doc.kind !== query.kind) || (query.realm !== undefined && doc.realm !== query.realm)) continue;
      recalled.push({ doc, score: hit.score * (0.5 + doc.importance) });
    }
    return recalled.sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? 1 : -1)).slice(0, query.limit);
  }

  get(org: OrgId, id: string): Promise<MemoryDoc> {
    return getOr404(this.collections.memory, org, id, 'memory entry');
  }

  async update(org: OrgId, id: string, patch: MemoryPatch): Promise<MemoryDoc> {
    const entry = await this.get(org, id);
    if (patch.realm !== undefined && patch.realm !== entry.realm) await this.requireRealm(org, patch.realm);
    // a store patch's `undefined` deletes the field: drop what the caller left out
    const updated = await this.collections.memory.update(org, entry.id, {
      ...stripUndefined(patch),
      ...(patch.importance === undefined ? {} : { importance: Math.fround(patch.importance) }),
    });
    if (!updated) throw new ServiceError('not_found', `memory entry ${id} not found`);
    if (this.vectors !== undefined && (updated.text !== entry.text || updated.title !== entry.title || updated.realm !== entry.realm)) {
      if (updated.realm !== entry.realm) await this.vectors.memoryRemoved(org, entry);
      this.vectors.memoryChanged(org, updated);
    }
    return updated;
  }

  async delete(org: OrgId, id: string): Promise<void> {
    const entry = await this.get(org, id);
    await this.collections.memory.delete(org, entry.id);
    await this.vectors?.memoryRemoved(org, entry);
  }
}
