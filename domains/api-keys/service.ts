/**
 * API keys: programmatic credentials of an organization. The plaintext key is returned once (at creation
 * and rotation) and stored only as its sha256. Revoking is soft: the record stays with `active: false`.
 */
import type { Collections } from '../collections.js';
import type { GrantCheck } from '../roles/service.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { IdentityService } from '../../runtime/auth/identity.js';
import type { Permission } from '../../runtime/auth/permissions.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import type { ApiKeyDoc } from '../../runtime/collections.js';

export type { ApiKeyDoc };
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

const DAY_MS = 86_400_000;

/** the caller's checks that it holds what a key hands out or holds (403); the route supplies them */
export interface KeyGuard {
  readonly grant: GrantCheck;
  readonly covers: (held: ApiKeyDoc, action: string) => void;
}

export interface ApiKeyFields {
  readonly name: string;
  readonly permissions: Permission[];
  readonly source_ids?: string[] | null | undefined;
  readonly expires_in_days?: number | null | undefined;
}

export interface ApiKeyPatch {
  readonly name?: string | undefined;
  readonly permissions?: Permission[] | undefined;
  readonly source_ids?: string[] | null | undefined;
  readonly expires_in_days?: number | null | undefined;
}

/** a key and its plaintext secret, answered once */
export interface IssuedKey {
  readonly record: ApiKeyDoc;
  readonly key: string;
}

/** A key made by a source-scoped API key stays within that scope: omitted source_ids inherit it, wider ones answer 403. */
function scopeFor(caller: AuthContext, requested: string[] | null | undefined): string[] | null {
  if (caller.sourceIds === null) return requested ?? null;
  if (requested === undefined || requested === null) return [...caller.sourceIds];
  const outside = requested.filter((id) => !caller.sourceIds?.includes(id));
  if (outside.length > 0) {
    throw new ServiceError('forbidden', `this API key cannot grant access to sources outside its own scope: ${outside.join(', ')}`, {
      source_ids: outside,
    });
  }
  return requested;
}

export class ApiKeyService {
  constructor(
    private readonly collections: Pick<Collections, 'apiKeys'>,
    private readonly clock: Pick<RuntimeClock, 'now'>,
  ) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['apiKeys'], 'list' | 'revision'> {
    return this.collections.apiKeys;
  }

  async create(caller: AuthContext, fields: ApiKeyFields, guard: KeyGuard): Promise<IssuedKey> {
    guard.grant(fields.permissions);
    const source_ids = scopeFor(caller, fields.source_ids);
    const expiresInDays = fields.expires_in_days ?? null;
    const { key, hash, prefix } = IdentityService.newApiKey();
    const record = await unique('API key', () =>
      this.collections.apiKeys.insert(caller.orgId, {
        name: fields.name,
        permissions: fields.permissions,
        source_ids,
        key_hash: hash,
        key_prefix: prefix,
        active: true,
        expires_in_days: expiresInDays,
        expires_at: expiresInDays === null ? null : isoAt(this.clock.now() + expiresInDays * DAY_MS),
        created_by: caller.userId,
        revoked_at: null,
        rotated_at: null,
        last_used_at: null,
      }),
    );
    return { record, key };
  }

  get(org: OrgId, id: string): Promise<ApiKeyDoc> {
    return getOr404(this.collections.apiKeys, org, id, 'API key');
  }

  /** rename or re-scope; expires_in_days is immutable */
  async update(caller: AuthContext, id: string, patch: ApiKeyPatch, guard: KeyGuard): Promise<ApiKeyDoc> {
    const record = await this.get(caller.orgId, id);
    rejectImmutable(record, patch, ['expires_in_days']);
    guard.covers(record, 'change');
    if (patch.permissions !== undefined) guard.grant(patch.permissions);
    const source_ids = patch.source_ids === undefined ? undefined : scopeFor(caller, patch.source_ids);
    const updated = await this.collections.apiKeys.update(caller.orgId, record.id, {
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.permissions === undefined ? {} : { permissions: patch.permissions }),
      ...(source_ids === undefined ? {} : { source_ids }),
    });
    if (!updated) throw new ServiceError('not_found', `API key ${id} not found`);
    return updated;
  }

  /** a new secret; the old one stops at once. Refused for a revoked or expired key. */
  async rotate(caller: AuthContext, id: string, guard: KeyGuard): Promise<IssuedKey> {
    const record = await this.get(caller.orgId, id);
    guard.covers(record, 'rotate');
    if (!record.active) throw new ServiceError('conflict', 'a revoked API key cannot be rotated', { id: record.id });
    if (record.expires_at !== null && Date.parse(record.expires_at) <= this.clock.now()) {
      throw new ServiceError('conflict', 'an expired API key cannot be rotated; create a new one', { id: record.id });
    }
    const { key, hash, prefix } = IdentityService.newApiKey();
    const updated = await unique('API key', () =>
      this.collections.apiKeys.update(caller.orgId, record.id, { key_hash: hash, key_prefix: prefix, rotated_at: nowIso() }),
    );
    if (!updated) throw new ServiceError('not_found', `API key ${id} not found`);
    return { record: updated, key };
  }

  /** revoking twice keeps the first revocation time */
  async revoke(caller: AuthContext, id: string, guard: KeyGuard): Promise<ApiKeyDoc> {
    const record = await this.get(caller.orgId, id);
    guard.covers(record, 'revoke');
    if (!record.active) return record;
    const updated = await this.collections.apiKeys.update(caller.orgId, record.id, { active: false, revoked_at: nowIso() });
    if (!updated) throw new ServiceError('not_found', `API key ${id} not found`);
    return updated;
  }
}
