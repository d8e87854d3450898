import type { PlatformCollections as Collections } from '../collections.js';
import type { OrgId } from '../store/types.js';
import { builtinRole, isPermission, type Permission } from './permissions.js';

export interface ResolvedRole {
  readonly name: string;
  readonly permissions: readonly Permission[];
}

/** A built-in or custom role of the organization, by name; null when unknown. */
export async function resolveRole(roles: Collections['roles'], org: OrgId, name: string): Promise<ResolvedRole | null> {
  const builtin = builtinRole(name);
  if (builtin) return builtin;
  const custom = await roles.findOne(org, { name });
  return custom ? { name: custom.name, permissions: custom.permissions.filter(isPermission) } : null;
}
