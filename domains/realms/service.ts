/** Realms: namespaces for graph, sources and memory. `default` always exists and cannot be deleted. */
import type { Collections } from '../collections.js';
import type { RealmDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface RealmFields {
  readonly display_name?: string | null;
  readonly description?: string | null;
  readonly color?: string | null;
}

export class RealmService {
  constructor(private readonly collections: Pick<Collections, 'realms' | 'memory'>) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['realms'], 'list' | 'revision'> {
    return this.collections.realms;
  }

  create(org: OrgId, name: string, fields: RealmFields): Promise<RealmDoc> {
    return unique('realm', () =>
      this.collections.realms.insert(org, {
        name,
        display_name: fields.display_name ?? null,
        description: fields.description ?? null,
        color: fields.color ?? null,
      }),
    );
  }

  /** by id, or by name */
  async get(org: OrgId, idOrName: string): Promise<RealmDoc> {
    const { realms } = this.collections;
    const realm = (await realms.get(org, idOrName)) ?? (await realms.findOne(org, { name: idOrName }));
    if (!realm) throw new ServiceError('not_found', `realm ${idOrName} not found`);
    return realm;
  }

  /** the name is fixed at creation (repeating it is fine) */
  async update(org: OrgId, id: string, patch: RealmFields & { readonly name?: string }): Promise<RealmDoc> {
    const realm = await getOr404(this.collections.realms, org, id, 'realm');
    rejectImmutable(realm, patch, ['name']);
    const { name: _name, ...fields } = patch;
    const updated = await this.collections.realms.update(org, realm.id, fields);
    if (!updated) throw new ServiceError('not_found', `realm ${id} not found`);
    return updated;
  }

  /** refused for `default` and for a realm entries still name (they would be orphaned) */
  async delete(org: OrgId, id: string): Promise<void> {
    const realm = await getOr404(this.collections.realms, org, id, 'realm');
    if (realm.name === DEFAULT_REALM) {
      throw new ServiceError('conflict', 'the default realm cannot be deleted', { realm: DEFAULT_REALM });
    }
    const memoryEntries = await this.collections.memory.count(org, { realm: realm.name });
    if (memoryEntries > 0) {
      throw new ServiceError('conflict', `realm ${realm.name} still holds ${memoryEntries} memory entries`, {
        realm: realm.name,
        memory_entries: memoryEntries,
      });
    }
    await this.collections.realms.delete(org, realm.id);
  }
}
