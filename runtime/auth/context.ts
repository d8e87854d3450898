import type { OrgId } from '../store/types.js';
import type { Permission } from './permissions.js';

/** Who is calling, resolved once per request by the bearer middleware. */
export interface AuthContext {
  /** `pipeline`: a pipeline-scoped token (a user's identity cut down to PIPELINE_TOKEN_PERMISSIONS) */
  readonly kind: 'user' | 'api_key' | 'pipeline';
  readonly orgId: OrgId;
  /** the user, or the user who created the API key */
  readonly userId: string;
  readonly role: string;
  readonly permissions: ReadonlySet<Permission>;
  readonly apiKeyId: string | null;
  /** an API key scoped to sources sees only these; null = all */
  readonly sourceIds: readonly string[] | null;
  /** set when the credential is a pipeline-scoped token: the run it may report to */
  readonly pipelineRunId?: string;
}
