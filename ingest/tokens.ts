/**
 * Ingest tokens: `ctx_` + 32 crypto-random alphanumerics, shown once, kept as
 * a sha256 hash. A token resolves to its pipeline (and organization) by hash.
 */
import type { ContextPipelineDoc, IngestTokenDoc, Collections } from '../runtime/collections.js';
import { randomAlphanumeric, sha256Hex } from '../runtime/crypto.js';
import type { OrgId } from '../runtime/store/types.js';

export const TOKEN_PREFIX = 'ctx_';
export const TOKEN_PATTERN = /^ctx_[A-Za-z0-9]{32}$/;
/** generated signing secrets: 40 alphanumerics (~238 bits) */
const SECRET_LENGTH = 40;

export interface NewToken {
  readonly token: string;
  readonly hash: string;
  /** `ctx_` + the first 4 random characters */
  readonly prefix: string;
}

export function newIngestToken(): NewToken {
  const token = TOKEN_PREFIX + randomAlphanumeric(32);
  return { token, hash: sha256Hex(token), prefix: token.slice(0, TOKEN_PREFIX.length + 4) };
}

export const newSigningSecret = (): string => randomAlphanumeric(SECRET_LENGTH);

export interface ResolvedToken {
  readonly orgId: OrgId;
  readonly token: IngestTokenDoc;
  readonly pipeline: ContextPipelineDoc;
}

/** The live token and its pipeline, or null (malformed, unknown, revoked, or its pipeline is gone). */
export async function resolveToken(collections: Collections, token: string): Promise<ResolvedToken | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const [found] = await collections.ingestTokens.findAcrossOrgs({ token_hash: sha256Hex(token) }, 1);
  if (!found || found.revoked_at !== null) return null;
  const pipeline = await collections.contextPipelines.get(found.org_id, found.pipeline_id);
  if (!pipeline) return null;
  return { orgId: found.org_id, token: found, pipeline };
}
