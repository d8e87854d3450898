/**
 * Permission lists in request bodies and the rule shared by API
 * keys, custom roles, invites and role changes: nobody hands out more than
 * they hold (otherwise `role:manage` + `user:manage` would reach `org:manage`).
 * What role a caller may assign is `assignableRole` in domains/roles/service.ts.
 */
import { z } from 'zod';
import type { AuthContext } from '../runtime/auth/context.js';
import { ALL_PERMISSIONS, isPermission, type Permission } from '../runtime/auth/permissions.js';
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

/**
 * 403 `forbidden` unless the caller covers everything a credential holds:
 * each of its permissions, and (for a source-scoped caller) each of its
 * sources. Rotating, changing or revoking a key needs this, or `api_key:manage`
 * alone would reach an owner's key (and its plaintext, on rotation).
 */
export function assertCovers(
  auth: AuthContext,
  held: { readonly permissions: readonly string[]; readonly source_ids: readonly string[] | null },
  action: string,
): void {
  const missing = held.permissions.filter((permission) => !isPermission(permission) || !auth.permissions.has(permission));
  if (missing.length > 0) {
    throw new ServiceError('forbidden', `you cannot ${action} a key holding permissions you do not hold: ${missing.join(', ')}`, {
      permissions: missing,
    });
  }
  if (auth.sourceIds === null) return;
  const outside = held.source_ids === null ? null : held.source_ids.filter((id) => !auth.sourceIds?.includes(id));
  if (outside === null || outside.length > 0) {
    throw new ServiceError('forbidden', `you cannot ${action} a key that reaches sources outside your own scope`, {
      source_ids: outside ?? 'all',
    });
  }
}
