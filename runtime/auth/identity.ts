/**
 * Identity: registration, login, token issue and the bearer middleware's
 * resolution of a credential (local HS256 JWT, OIDC RS256 JWT, or API key)
 * into an AuthContext. Membership and role are read on every request, so a
 * removed user or a changed role takes effect at once; the same holds for the
 * creator of an API key (a key never does more than its creator can now) and
 * for the run of a pipeline token (the token dies when its run ends).
 */
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { PlatformCollections as Collections } from '../collections.js';
import type { MembershipDoc, OrganizationDoc, UserDoc } from '../collections.js';
import type { ServiceConfig } from '../config.js';
import { randomAlphanumeric, sha256Hex } from '../crypto.js';
import { ServiceError } from '../errors.js';
import { asOrgId, UniqueViolation, type OrgCollection, type OrgId, type StoredFields } from '../store/types.js';
import type { AuthContext } from './context.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from './passwords.js';
import { isPermission, PIPELINE_TOKEN_PERMISSIONS, withImplied, type Permission } from './permissions.js';
import { resolveRole } from './roles.js';
import { isoAt, systemClock, type RuntimeClock } from '../clock.js';

const LOCAL_ISSUER = 'agent-context-service';
const API_KEY_PREFIX = 'sk_';
const API_KEY_LENGTH = 40;
const INVITE_TOKEN_PREFIX = 'inv_';
const INVITE_TOKEN_LENGTH = 40;
/** verified JWTs kept by their exact text; bounded so a flood of tokens cannot grow memory */
const TOKEN_CACHE_LIMIT = 10_000;
/** last_used_at is written at most this often per key */
const LAST_USED_WRITE_MS = 60_000;

export interface LoginResult {
  readonly token: string;
  readonly expires_at: string;
  readonly user: { readonly id: string; readonly email: string; readonly role: string };
  readonly organization: { readonly id: string; readonly name: string };
}

interface VerifiedToken {
  readonly userId: string;
  readonly orgId: OrgId;
  readonly expiresAtMs: number;
  /** set for a pipeline-scoped token: the run it reports to */
  readonly pipelineRunId?: string;
}

/** Hook run when an organization is created (default realm, settings, default agent). */
/** the pipeline run a pipeline token belongs to: the token lives only while the run runs */
interface PipelineRunState extends StoredFields {
  readonly status: string;
  readonly token_expires_at: string;
}

/** what identity reads: the platform's collections and the pipeline runs of the pipelines domain */
export type IdentityCollections = Collections & { readonly pipelineRuns: Pick<OrgCollection<PipelineRunState>, 'get' | 'revision'> };

export type OrganizationProvisioner = (org: OrgId, organizationName: string) => Promise<void>;

/** The credential of `Bearer <credential>` (scheme case-insensitive), or null. Runs on every request: no regex. */
function bearerCredential(header: string): string | null {
  if (header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return null;
  const credential = header.slice(7).trim();
  return credential.length === 0 || /\s/.test(credential) ? null : credential;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export class IdentityService {
  private readonly tokenCache = new Map<string, VerifiedToken>();
  /**
   * Resolved contexts by credential, valid while the revisions of the records
   * they were read from are unchanged (exact for the embedded store; engines
   * without revisions are read on every request).
   */
  private readonly contextCache = new Map<string, { readonly context: AuthContext; readonly stamp: string; readonly freshUntilMs: number }>();
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | null;

  constructor(
    private readonly config: ServiceConfig,
    private readonly collections: IdentityCollections,
    private readonly provision: OrganizationProvisioner,
    /** token lifetimes, key and invite expiries, caches */
    private readonly clock: Pick<RuntimeClock, 'now'> = systemClock,
  ) {
    this.jwks = config.auth.jwksUrl ? createRemoteJWKSet(new URL(config.auth.jwksUrl), { cooldownDuration: 30_000 }) : null;
  }

  /** Creates an organization and its owner; an existing user with the right password gets one more organization. */
  async register(input: { email: string; password: string; organization_name: string }): Promise<LoginResult> {
    const email = normalizeEmail(input.email);
    let user = await this.collections.users.findOne({ email });
    if (user) {
      if (!(await verifyPassword(input.password, user.password_hash))) {
        throw new ServiceError('conflict', 'a user with this email already exists', { field: 'email' });
      }
    } else {
      try {
        user = await this.collections.users.insert({ email, password_hash: await hashPassword(input.password) });
      } catch (error) {
        if (error instanceof UniqueViolation) throw new ServiceError('conflict', 'a user with this email already exists', { field: 'email' });
        throw error;
      }
    }
    const organization = await this.createOrganization(input.organization_name, user.id);
    return this.issue(user, organization, 'owner');
  }

  async createOrganization(name: string, ownerUserId: string): Promise<OrganizationDoc> {
    const organization = await this.collections.organizations.insert({ name });
    const org = asOrgId(organization.id);
    await this.collections.memberships.insert(org, { user_id: ownerUserId, role: 'owner' });
    await this.provision(org, name);
    return organization;
  }

  async login(input: { email: string; password: string; organization_id?: string | undefined }): Promise<LoginResult> {
    const user = await this.collections.users.findOne({ email: normalizeEmail(input.email) });
    const valid = await verifyPassword(input.password, user?.password_hash ?? (await dummyPasswordHash()));
    if (!user || !valid) throw new ServiceError('invalid_credentials', 'email or password is wrong');

    const memberships = await this.collections.memberships.findAcrossOrgs({ user_id: user.id }, 1000);
    if (memberships.length === 0) throw new ServiceError('invalid_credentials', 'this user belongs to no organization');
    let chosen: (MembershipDoc & { org_id: OrgId }) | undefined;
    if (input.organization_id !== undefined) {
      chosen = memberships.find((membership) => membership.org_id === input.organization_id);
    } else if (memberships.length === 1) {
      chosen = memberships[0];
    }
    if (!chosen) {
      const organizations = await Promise.all(
        memberships.map(async (membership) => ({
          id: membership.org_id,
          name: (await this.collections.organizations.get(membership.org_id))?.name ?? null,
          role: membership.role,
        })),
      );
      throw new ServiceError(
        'organization_required',
        input.organization_id === undefined
          ? 'this user belongs to several organizations: repeat the login with organization_id'
          : 'this user is not a member of that organization',
        { organizations },
      );
    }
    const organization = await this.collections.organizations.get(chosen.org_id);
    if (!organization) throw new ServiceError('invalid_credentials', 'organization no longer exists');
    return this.issue(user, organization, chosen.role);
  }

  /** Signs a local HS256 token scoped to one organization. */
  async issue(user: UserDoc, organization: OrganizationDoc, role: string): Promise<LoginResult> {
    // wall clock: a JWT's iat/exp are checked by whoever verifies it, on real time
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + this.config.auth.jwtTtlSeconds;
    const token = await new SignJWT({ org: organization.id })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(LOCAL_ISSUER)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.config.auth.jwtSecret);
    return {
      token,
      expires_at: new Date(expiresAt * 1000).toISOString(),
      user: { id: user.id, email: user.email, role },
      organization: { id: organization.id, name: organization.name },
    };
  }

  /**
   * A pipeline-scoped token for one run: the starting user's identity, cut
   * down to PIPELINE_TOKEN_PERMISSIONS, bound to the run (`prun` claim).
   */
  async issuePipelineToken(userId: string, org: OrgId, runId: string, expiresAt: Date): Promise<string> {
    return new SignJWT({ org, prun: runId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(LOCAL_ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.config.auth.jwtSecret);
  }

  /** The bearer middleware: JWT (local or OIDC) or API key, same header. */
  async authenticate(authorization: string | undefined): Promise<AuthContext> {
    if (authorization === undefined) throw new ServiceError('unauthorized', 'missing Authorization: Bearer <token>');
    const credential = bearerCredential(authorization);
    if (credential === null) throw new ServiceError('unauthorized', 'Authorization must be "Bearer <token>"');
    const cached = this.contextCache.get(credential);
    // wall clock: a JWT's exp is real time, checked by any verifier (an API key's expiry is on the runtime clock)
    const now = credential.startsWith(API_KEY_PREFIX) ? this.clock.now() : Date.now();
    if (cached && cached.freshUntilMs > now && cached.stamp === this.stamp(cached.context)) return cached.context;
    const { context, freshUntilMs } = credential.startsWith(API_KEY_PREFIX)
      ? await this.authenticateApiKey(credential)
      : await this.authenticateJwt(credential);
    const stamp = this.stamp(context);
    if (stamp !== null) {
      if (this.contextCache.size >= TOKEN_CACHE_LIMIT) this.contextCache.clear();
      this.contextCache.set(credential, { context, stamp, freshUntilMs });
    }
    return context;
  }

  private async authenticateJwt(token: string): Promise<{ context: AuthContext; freshUntilMs: number }> {
    const verified = await this.verifyJwt(token);
    const context = await this.contextFor(verified.userId, verified.orgId, 'user', null);
    if (verified.pipelineRunId === undefined) return { context, freshUntilMs: verified.expiresAtMs };
    await this.assertRunLive(verified.orgId, verified.pipelineRunId);
    // never more than the user who started the run holds now
    const permissions = new Set(PIPELINE_TOKEN_PERMISSIONS.filter((permission) => context.permissions.has(permission)));
    return { context: { ...context, kind: 'pipeline', permissions, pipelineRunId: verified.pipelineRunId }, freshUntilMs: verified.expiresAtMs };
  }

  /** A pipeline token lives only while its run runs: finished, failed, cancelled or past its deadline = 401. */
  private async assertRunLive(org: OrgId, runId: string): Promise<void> {
    const run = await this.collections.pipelineRuns.get(org, runId);
    if (!run) throw new ServiceError('unauthorized', 'the pipeline run of this token no longer exists');
    if (run.status !== 'running') throw new ServiceError('unauthorized', `the pipeline run of this token has ended (${run.status})`);
    if (Date.parse(run.token_expires_at) <= this.clock.now()) throw new ServiceError('unauthorized', 'the pipeline run of this token is past its deadline');
  }

  /** Revisions of everything a context was read from; null when the store cannot tell (no caching). */
  private stamp(context: AuthContext): string | null {
    const org = context.orgId;
    const revisions = [this.collections.memberships.revision(org), this.collections.roles.revision(org)];
    // an API key is also its own record; a pipeline token is also its run
    if (context.kind === 'api_key') revisions.push(this.collections.apiKeys.revision(org));
    if (context.kind === 'pipeline') revisions.push(this.collections.pipelineRuns.revision(org));
    return revisions.includes(null) ? null : revisions.join(':');
  }

  private async contextFor(userId: string, org: OrgId, kind: 'user', apiKey: null): Promise<AuthContext> {
    const membership = await this.collections.memberships.findOne(org, { user_id: userId });
    if (!membership) throw new ServiceError('unauthorized', 'this user is not a member of the organization');
    return {
      kind,
      orgId: org,
      userId,
      role: membership.role,
      permissions: await this.permissionsOf(org, membership.role),
      apiKeyId: apiKey,
      sourceIds: null,
    };
  }

  /** Permissions of a built-in or custom role; an unknown role grants nothing. */
  async permissionsOf(org: OrgId, role: string): Promise<ReadonlySet<Permission>> {
    // a role holds what it names and what those imply (`X:manage` brings `X:read`)
    return withImplied((await resolveRole(this.collections.roles, org, role))?.permissions ?? []);
  }

  private async verifyJwt(token: string): Promise<VerifiedToken> {
    const cached = this.tokenCache.get(token);
    if (cached) {
      // wall clock: a JWT's exp is real time (see signing above)
      if (cached.expiresAtMs > Date.now()) return cached;
      this.tokenCache.delete(token);
      throw new ServiceError('token_expired', 'token has expired; log in again');
    }
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new ServiceError('unauthorized', 'bearer token is not a JWT or an API key');
    }
    const verified = alg === 'HS256' ? await this.verifyLocal(token) : await this.verifyOidc(token);
    if (this.tokenCache.size >= TOKEN_CACHE_LIMIT) this.tokenCache.clear();
    this.tokenCache.set(token, verified);
    return verified;
  }

  private async verifyLocal(token: string): Promise<VerifiedToken> {
    const payload = await this.guardJose(() => jwtVerify(token, this.config.auth.jwtSecret, { algorithms: ['HS256'], issuer: LOCAL_ISSUER }));
    if (typeof payload.sub !== 'string' || typeof payload['org'] !== 'string' || typeof payload.exp !== 'number') {
      throw new ServiceError('unauthorized', 'token lacks sub, org or exp');
    }
    const run = payload['prun'];
    const verified = { userId: payload.sub, orgId: asOrgId(payload['org']), expiresAtMs: payload.exp * 1000 };
    return typeof run === 'string' ? { ...verified, pipelineRunId: run } : verified;
  }

  /**
   * OIDC: RS256 against JWKS_URL with issuer and audience checked. The `email`
   * claim names the local user (invited or registered first); an `org_id`
   * claim picks the organization, else the user's only one.
   */
  private async verifyOidc(token: string): Promise<VerifiedToken> {
    const { jwks } = this;
    const { issuer, audience } = this.config.auth;
    if (this.config.auth.provider !== 'oidc' || !jwks || !issuer || !audience) {
      throw new ServiceError('unauthorized', 'token algorithm is not accepted by this server');
    }
    // a key set that cannot be fetched is the provider's outage (503), not a bad token (401)
    const keyFor: JWTVerifyGetKey = async (header, input) => {
      try {
        return await jwks(header, input);
      } catch (error) {
        if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) throw error;
        throw new ServiceError('service_unavailable', 'the identity provider key set (JWKS_URL) cannot be read; try again later', {
          dependency: 'oidc_jwks',
        });
      }
    };
    const payload = await this.guardJose(() => jwtVerify(token, keyFor, { algorithms: ['RS256'], issuer, audience }));
    if (typeof payload.exp !== 'number') throw new ServiceError('unauthorized', 'token has no expiry');
    const email = payload['email'];
    if (typeof email !== 'string' || payload['email_verified'] === false) {
      throw new ServiceError('unauthorized', 'identity token has no verified email claim');
    }
    const user = await this.collections.users.findOne({ email: normalizeEmail(email) });
    if (!user) throw new ServiceError('unauthorized', 'no user with this email; ask an administrator for an invite');
    const memberships = await this.collections.memberships.findAcrossOrgs({ user_id: user.id }, 1000);
    const claimedOrg = payload['org_id'];
    const membership =
      typeof claimedOrg === 'string' ? memberships.find((candidate) => candidate.org_id === claimedOrg) : memberships.length === 1 ? memberships[0] : undefined;
    if (!membership) {
      throw new ServiceError('unauthorized', 'cannot tell the organization: add an org_id claim naming one the user belongs to');
    }
    return { userId: user.id, orgId: membership.org_id, expiresAtMs: payload.exp * 1000 };
  }

  private async guardJose(verify: () => Promise<{ payload: JWTPayload }>): Promise<JWTPayload> {
    try {
      return (await verify()).payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new ServiceError('token_expired', 'token has expired; log in again');
      if (error instanceof joseErrors.JOSEError) throw new ServiceError('unauthorized', `invalid token: ${error.code}`);
      throw error;
    }
  }

  /** fresh until the key expires, and at most until its last_used_at is due for a write again */
  private async authenticateApiKey(key: string): Promise<{ context: AuthContext; freshUntilMs: number }> {
    const [record] = await this.collections.apiKeys.findAcrossOrgs({ key_hash: sha256Hex(key) }, 1);
    if (!record) throw new ServiceError('unauthorized', 'unknown API key');
    if (!record.active) throw new ServiceError('api_key_revoked', 'this API key was revoked');
    const now = this.clock.now();
    if (record.expires_at !== null && Date.parse(record.expires_at) <= now) {
      throw new ServiceError('api_key_revoked', 'this API key has expired');
    }
    let lastUsedMs = record.last_used_at === null ? 0 : Date.parse(record.last_used_at);
    if (lastUsedMs + LAST_USED_WRITE_MS < now) {
      await this.collections.apiKeys.update(record.org_id, record.id, { last_used_at: isoAt(now) });
      lastUsedMs = now;
    }
    // a key does at most what its creator may do now: demoted, it shrinks; removed, it stops
    const creator = await this.collections.memberships.findOne(record.org_id, { user_id: record.created_by });
    if (!creator) throw new ServiceError('api_key_revoked', 'the creator of this API key is no longer a member of the organization');
    const creatorPermissions = await this.permissionsOf(record.org_id, creator.role);
    const expiresAtMs = record.expires_at === null ? Infinity : Date.parse(record.expires_at);
    return {
      context: {
        kind: 'api_key',
        orgId: record.org_id,
        userId: record.created_by,
        role: 'api_key',
        permissions: new Set([...withImplied(record.permissions.filter(isPermission))].filter((permission) => creatorPermissions.has(permission))),
        apiKeyId: record.id,
        sourceIds: record.source_ids,
      },
      freshUntilMs: Math.min(expiresAtMs, lastUsedMs + LAST_USED_WRITE_MS),
    };
  }

  /**
   * Redeems an invite: a new email becomes a user with this password, a known
   * one must prove it with theirs; either way the user joins the inviting
   * organization with the invited role and gets a token scoped to it.
   * Thrown when: the token is unknown, used or expired (404), the password is
   * wrong (401), the user already belongs to the organization (409).
   */
  async acceptInvite(input: { token: string; password: string }): Promise<LoginResult> {
    const gone = (): ServiceError => new ServiceError('not_found', 'invite not found or already used');
    const [invite] = await this.collections.invites.findAcrossOrgs({ token_hash: sha256Hex(input.token) }, 1);
    if (!invite || invite.accepted_at !== null || Date.parse(invite.expires_at) <= this.clock.now()) throw gone();
    const organization = await this.collections.organizations.get(invite.org_id);
    if (!organization) throw gone();

    let user = await this.collections.users.findOne({ email: invite.email });
    if (user) {
      if (!(await verifyPassword(input.password, user.password_hash))) {
        throw new ServiceError('invalid_credentials', 'this email already has an account: give its password to accept');
      }
      if (await this.collections.memberships.findOne(invite.org_id, { user_id: user.id })) {
        throw new ServiceError('conflict', 'this user already belongs to the organization');
      }
    } else {
      try {
        user = await this.collections.users.insert({ email: invite.email, password_hash: await hashPassword(input.password) });
      } catch (error) {
        if (error instanceof UniqueViolation) throw new ServiceError('conflict', 'the account was created meanwhile; accept again');
        throw error;
      }
    }
    try {
      await this.collections.memberships.insert(invite.org_id, { user_id: user.id, role: invite.role });
    } catch (error) {
      // a concurrent acceptance of the same invite got there first
      if (error instanceof UniqueViolation) throw gone();
      throw error;
    }
    await this.collections.invites.update(invite.org_id, invite.id, { accepted_at: isoAt(this.clock.now()) });
    return this.issue(user, organization, invite.role);
  }

  /** A new plaintext invite token and the hash that is stored. */
  static newInviteToken(): { token: string; hash: string } {
    const token = INVITE_TOKEN_PREFIX + randomAlphanumeric(INVITE_TOKEN_LENGTH);
    return { token, hash: sha256Hex(token) };
  }

  /** A new plaintext API key and what is stored of it. */
  static newApiKey(): { key: string; hash: string; prefix: string } {
    const key = API_KEY_PREFIX + randomAlphanumeric(API_KEY_LENGTH);
    return { key, hash: sha256Hex(key), prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
  }
}
