/**
 * Permission lists in request bodies, role lookup, and the rule shared by API
 * keys, custom roles, invites and role changes: nobody hands out more than
 * they hold (otherwise `role:manage` + `user:manage` would reach `org:manage`).
 */
import { z } from 'zod';
import type { AuthContext } from '../runtime/auth/context.js';
import { ALL_PERMISSIONS, type Permission } from '../runtime/auth/permissions.js';
import { resolveRole, type ResolvedRole } from '../runtime/auth/roles.js';
import type { Collections } from '../runtime/collections.js';
import { ServiceError } from '../runtime/errors.js';

/** Catalog-checked permission strings; an unknown one fails validation with its name; duplicates collapse. */
export const permissionList = z
  .array(
    z.enum(ALL_PERMISSIONS as [Permission, ...Permission[]], {
      error: (issue) => `unknown permission ${JSON.stringify(issue.input)} (GET /roles/permissions lists them)`,
    }),
  )
  .max(200)
  .transform((list) => [...new Set(list)]);

/** 403 `forbidden` unless the caller holds every permission it hands out. */
export function assertGrantable(auth: AuthContext, permissions: readonly Permission[]): void {
  const missing = permissions.filter((permission) => !auth.permissions.has(permission));
  if (missing.length > 0) {
    throw new ServiceError('forbidden', `you cannot grant permissions you do not hold: ${missing.join(', ')}`, {
      permissions: missing,
    });
  }
}

/** The role a caller may give someone: it must exist (400), `owner` only from an owner, no wider than the caller (403). */
export async function assignableRole(collections: Collections, auth: AuthContext, name: string): Promise<ResolvedRole> {
  const role = await resolveRole(collections.roles, auth.orgId, name);
  if (!role) throw new ServiceError('validation_error', `unknown role "${name}" (GET /roles lists them)`, { role: name });
  if (role.name === 'owner' && !(auth.kind === 'user' && auth.role === 'owner')) {
    throw new ServiceError('forbidden', 'only an owner can make someone an owner');
  }
  assertGrantable(auth, role.permissions);
  return role;
}
