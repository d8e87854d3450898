import type { OrgId } from '../store/types.js';
import type { Permission } from './permissions.js';

/** Who is calling, resolved once per request by the bearer middleware. */
export interface AuthContext {
  readonly kind: 'user' | 'api_key';
  readonly orgId: OrgId;
  /** the user, or the user who created the API key */
  readonly userId: string;
  readonly role: string;
  readonly permissions: ReadonlySet<Permission>;
  readonly apiKeyId: string | null;
  /** an API key scoped to sources sees only these; null = all */
  readonly sourceIds: readonly string[] | null;
}
