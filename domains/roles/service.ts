/**
 * Roles: the built-in roles (fixed ids `builtin:<name>`, read-only) and the organization's custom roles.
 * Members hold a role by name, so a custom role nobody holds (and no open invite names) may be deleted.
 */
import type { Collections } from '../collections.js';
import { BUILTIN_ROLES, builtinRole, type BuiltinRole, type Permission } from '../../runtime/auth/permissions.js';
import type { RoleDoc } from '../../runtime/collections.js';

export type { RoleDoc };
import type { AuthContext } from '../../runtime/auth/context.js';
import { resolveRole, type ResolvedRole } from '../../runtime/auth/roles.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import { rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export const BUILTIN_PREFIX = 'builtin:';
/** API-key callers carry this role name (runtime/auth/identity.ts); a custom role may not take it. */
const RESERVED_NAMES = new Set(['api_key']);

const builtinById = (id: string): BuiltinRole | undefined => BUILTIN_ROLES.find((role) => BUILTIN_PREFIX + role.name === id);

const builtinModified = (): ServiceError => new ServiceError('conflict', 'built-in roles cannot be modified');

/** the caller's check that it may hand out these permissions (throws 403); the route supplies it */
export type GrantCheck = (permissions: readonly Permission[]) => void;

/** The role a caller may give someone: it must exist (400), `owner` only from an owner, no wider than the caller (403). */
export async function assignableRole(roles: Collections['roles'], caller: AuthContext, name: string, checkGrant: GrantCheck): Promise<ResolvedRole> {
  const role = await resolveRole(roles, caller.orgId, name);
  if (!role) throw new ServiceError('validation_error', `unknown role "${name}" (GET /roles lists them)`, { role: name });
  if (role.name === 'owner' && !(caller.kind === 'user' && caller.role === 'owner')) {
    throw new ServiceError('forbidden', 'only an owner can make someone an owner');
  }
  checkGrant(role.permissions);
  return role;
}

/** one page of roles: built-ins first (catalog order), then custom roles (by id) */
export interface RolePage {
  readonly builtins: readonly BuiltinRole[];
  readonly custom: readonly RoleDoc[];
  readonly more: boolean;
  readonly total: number;
}

export class RoleService {
  constructor(
    private readonly collections: Pick<Collections, 'roles' | 'memberships' | 'invites'>,
    private readonly clock: Pick<RuntimeClock, 'now'>,
  ) {}

  /** One keyset over two sources; `after` is the id of the last role of the previous page. */
  async list(org: OrgId, limit: number, after: string | null): Promise<RolePage> {
    const { roles } = this.collections;
    let builtinStart = 0;
    if (after !== null && after.startsWith(BUILTIN_PREFIX)) {
      const index = BUILTIN_ROLES.findIndex((role) => BUILTIN_PREFIX + role.name === after);
      if (index < 0) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
      builtinStart = index + 1;
    } else if (after !== null) {
      builtinStart = BUILTIN_ROLES.length;
    }
    const builtins = BUILTIN_ROLES.slice(builtinStart, builtinStart + limit);
    const customTotal = await roles.count(org);
    const room = limit - builtins.length;
    if (room <= 0) {
      const more = builtinStart + builtins.length < BUILTIN_ROLES.length || customTotal > 0;
      return { builtins, custom: [], more, total: BUILTIN_ROLES.length + customTotal };
    }
    const customAfter = after !== null && !after.startsWith(BUILTIN_PREFIX) ? after : null;
    const page = await roles.list(org, { limit: room, after: customAfter });
    return { builtins, custom: page.items, more: page.nextAfter !== null, total: BUILTIN_ROLES.length + customTotal };
  }

  /** the built-in with that id, or the custom role, or 404 */
  async get(org: OrgId, id: string): Promise<BuiltinRole | RoleDoc> {
    return builtinById(id) ?? this.custom(org, id);
  }

  /** built-in names (and `api_key`) are taken */
  create(
    org: OrgId,
    fields: { readonly name: string; readonly description?: string | undefined; readonly permissions: Permission[] },
    checkGrant: GrantCheck,
  ): Promise<RoleDoc> {
    if (builtinRole(fields.name) || RESERVED_NAMES.has(fields.name)) {
      throw new ServiceError('conflict', `"${fields.name}" is the name of a built-in role`, { fields: ['name'] });
    }
    checkGrant(fields.permissions);
    return unique('role', () =>
      this.collections.roles.insert(org, { name: fields.name, description: fields.description ?? '', permissions: fields.permissions }),
    );
  }

  /** the name is immutable; built-ins are fixed */
  async update(
    org: OrgId,
    id: string,
    patch: { readonly name?: string | undefined; readonly description?: string | undefined; readonly permissions?: Permission[] | undefined },
    checkGrant: GrantCheck,
  ): Promise<RoleDoc> {
    if (builtinById(id)) throw builtinModified();
    const role = await this.custom(org, id);
    rejectImmutable(role, patch, ['name']);
    if (patch.permissions !== undefined) checkGrant(patch.permissions);
    const updated = await this.collections.roles.update(org, role.id, {
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.permissions === undefined ? {} : { permissions: patch.permissions }),
    });
    if (!updated) throw new ServiceError('not_found', `role ${id} not found`);
    return updated;
  }

  /** refused for built-ins, a role members hold, and a role an open invite names */
  async delete(org: OrgId, id: string): Promise<void> {
    if (builtinById(id)) throw builtinModified();
    const role = await this.custom(org, id);
    const members = await this.collections.memberships.count(org, { role: role.name });
    if (members > 0) {
      throw new ServiceError('conflict', `role "${role.name}" is held by ${members} member(s); give them another role first`, {
        members,
      });
    }
    // an invite carrying the role would otherwise be accepted into a role that no longer exists
    const open = await this.collections.invites.findAll(org, { role: role.name, accepted_at: null });
    const now = this.clock.now();
    const pendingInvites = open.filter((invite) => Date.parse(invite.expires_at) > now).length;
    if (pendingInvites > 0) {
      throw new ServiceError('conflict', `role "${role.name}" is used by ${pendingInvites} pending invite(s); revoke them first`, {
        invites: pendingInvites,
      });
    }
    await this.collections.roles.delete(org, role.id);
  }

  private async custom(org: OrgId, id: string): Promise<RoleDoc> {
    const role = await this.collections.roles.get(org, id);
    if (!role) throw new ServiceError('not_found', `role ${id} not found`);
    return role;
  }
}
