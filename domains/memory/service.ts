/** Memory entries: facts, guidelines, preferences and notes agents recall, each in a realm of the organization. */
import type { Collections } from '../collections.js';
import type { MemoryDoc, MemoryKind } from './documents.js';
import { recallMemories, type RecallQuery, type RecalledMemory } from './recall.js';
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

export class MemoryService {
  constructor(private readonly collections: Pick<Collections, 'memory' | 'realms'>) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['memory'], 'list' | 'revision'> {
    return this.collections.memory;
  }

  /** 400 naming the `realm` field unless `realm` is a realm of the organization */
  async requireRealm(org: OrgId, realm: string): Promise<void> {
    if (!(await this.collections.realms.findOne(org, { name: realm }))) {
      throw new ServiceError('validation_error', `invalid realm: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    }
  }

  async create(org: OrgId, createdBy: string, fields: MemoryFields): Promise<MemoryDoc> {
    await this.requireRealm(org, fields.realm);
    return this.collections.memory.insert(org, {
      kind: fields.kind,
      realm: fields.realm,
      text: fields.text,
      title: fields.title ?? null,
      tags: fields.tags,
      // stored as a 32-bit float, as the provisioning contract describes it
      importance: Math.fround(fields.importance),
      created_by: createdBy,
    });
  }

  async recall(org: OrgId, query: RecallQuery): Promise<RecalledMemory[]> {
    if (query.realm !== undefined) await this.requireRealm(org, query.realm);
    return recallMemories(this.collections.memory, org, query);
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
    return updated;
  }

  async delete(org: OrgId, id: string): Promise<void> {
    const entry = await this.get(org, id);
    await this.collections.memory.delete(org, entry.id);
  }
}
