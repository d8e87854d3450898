/**
 * Ingest tokens: `ctx_` + 32 crypto-random alphanumerics, shown once, kept as
 * a sha256 hash. A token resolves to its pipeline (and organization) by hash.
 */
import type { ContextPipelineDoc, IngestTokenDoc } from '../runtime/collections.js';
import type { PlatformCollections as Collections } from '../runtime/collections.js';
import { deriveKey, randomAlphanumeric, seal, sha256Hex, unseal } from '../runtime/crypto.js';
import type { OrgId } from '../runtime/store/types.js';

const TOKEN_PREFIX = 'ctx_';
const TOKEN_PATTERN = /^ctx_[A-Za-z0-9]{32}$/;
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
export async function resolveToken(collections: Pick<Collections, 'ingestTokens' | 'contextPipelines'>, token: string): Promise<ResolvedToken | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const [found] = await collections.ingestTokens.findAcrossOrgs({ token_hash: sha256Hex(token) }, 1);
  if (!found || found.revoked_at !== null) return null;
  const pipeline = await collections.contextPipelines.get(found.org_id, found.pipeline_id);
  if (!pipeline) return null;
  return { orgId: found.org_id, token: found, pipeline };
}

type TokenRef = Pick<IngestTokenDoc, 'id' | 'pipeline_id'> & { readonly org_id: string };

/**
 * Signing secrets at rest: sealed with a key derived from the root secret,
 * bound to the organization, pipeline and token, so a sealed value copied to
 * another record does not open.
 */
export class SigningSecrets {
  private readonly key: Buffer;

  constructor(rootSecret: Uint8Array) {
    this.key = deriveKey(rootSecret, 'ingest-signing-secrets');
  }

  seal(token: TokenRef, secret: string): string {
    return seal(this.key, secret, SigningSecrets.context(token));
  }

  /**
   * The secret of a token record (a record from before sealing still holds it
   * in plaintext), or null when the sealed value does not open: another root
   * secret, or a value copied from another record.
   */
  open(token: TokenRef & Pick<IngestTokenDoc, 'signing_secret_sealed' | 'signing_secret'>): string | null {
    if (token.signing_secret_sealed === undefined) return token.signing_secret ?? null;
    try {
      return unseal(this.key, token.signing_secret_sealed, SigningSecrets.context(token));
    } catch {
      return null;
    }
  }

  private static context(token: TokenRef): string {
    return `ingest-token:${token.org_id}:${token.pipeline_id}:${token.id}`;
  }
}

/** Start-up migration: tokens written before secrets were sealed get them sealed, and the plaintext removed. */
export async function sealLegacySigningSecrets(collections: Collections, secrets: SigningSecrets): Promise<number> {
  let sealed = 0;
  // equality filters only: every record is read, once per start (tokens are few and small)
  for (const token of await collections.ingestTokens.findAcrossOrgs({}, Number.MAX_SAFE_INTEGER)) {
    if (token.signing_secret === undefined) continue;
    await collections.ingestTokens.update(token.org_id, token.id, {
      signing_secret_sealed: token.signing_secret_sealed ?? secrets.seal(token, token.signing_secret),
      signing_secret: undefined,
    });
    sealed += 1;
  }
  return sealed;
}
