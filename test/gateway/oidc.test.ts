import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { newSigningKey, signToken, startJwksServer, type FakeJwksServer, type SigningKey } from '../fakes/oidc/jwks-server.js';
import { oneOrg } from '../helpers/orgs.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'agent-context-service';
const OIDC_ENV = { AUTH_PROVIDER: 'oidc', JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE };

describe('OIDC provider (RS256 against JWKS_URL)', () => {
  let key: SigningKey;
  let jwks: FakeJwksServer;
  let server: TestServer;
  let alice: Session;

  const sign = (claims: Record<string, unknown>, options: { issuer?: string; audience?: string; expiresAt?: number } = {}) =>
    signToken(key, claims, { issuer: options.issuer ?? ISSUER, audience: options.audience ?? AUDIENCE, ...options });

  const expect401 = async (token: string, code: string) => {
    const response = await server.request('GET', '/auth/me', { token });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe(code);
    return response;
  };

  beforeAll(async () => {
    key = await newSigningKey('key-1');
    jwks = await startJwksServer([key]);
    ({ server, owner: alice } = await oneOrg({ ...OIDC_ENV, JWKS_URL: jwks.url }, { name: 'OIDC Org' }));
  });
  afterAll(async () => {
    await server.stop();
    await jwks.stop();
  });

  it('accepts a valid token for a registered user', async () => {
    const token = await sign({ email: alice.email });
    const me = await server.request('GET', '/auth/me', { token });
    expectStatus(me, 200).toMatchObject({
      id: alice.user.id,
      email: alice.email,
      kind: 'user',
      role: 'owner',
      organization: { id: alice.organization.id, name: 'OIDC Org' },
    });
    expect((await server.request('GET', '/realms', { token })).status).toBe(200);
    // the email claim is matched case-insensitively
    const shouted = await sign({ email: alice.email.toUpperCase(), email_verified: true });
    expect((await server.request('GET', '/auth/me', { token: shouted })).body.id).toBe(alice.user.id);
    expect(jwks.fetches).toBe(1);
  });

  it('still accepts the local tokens of register and login', async () => {
    expect((await server.request('GET', '/auth/me', { token: alice.token })).status).toBe(200);
    const login = await server.request('POST', '/auth/login', { body: { email: alice.email, password: alice.password } });
    expect((await server.request('GET', '/auth/me', { token: login.body.token })).status).toBe(200);
  });

  it('rejects a wrong issuer', async () => {
    const response = await expect401(await sign({ email: alice.email }, { issuer: 'https://evil.example.test/' }), 'unauthorized');
    expect(response.body.error.message).toContain('ERR_JWT_CLAIM_VALIDATION_FAILED');
  });

  it('rejects a wrong audience', async () => {
    await expect401(await sign({ email: alice.email }, { audience: 'another-service' }), 'unauthorized');
  });

  it('rejects an expired token', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) - 120;
    await expect401(await sign({ email: alice.email }, { expiresAt }), 'token_expired');
  });

  it('rejects a token signed by another key, under the same or an unknown key id', async () => {
    const impostor = await newSigningKey('key-1');
    const sameKid = await signToken(impostor, { email: alice.email }, { issuer: ISSUER, audience: AUDIENCE });
    const forged = await expect401(sameKid, 'unauthorized');
    expect(forged.body.error.message).toContain('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    const stranger = await newSigningKey('key-unknown');
    const unknownKid = await signToken(stranger, { email: alice.email }, { issuer: ISSUER, audience: AUDIENCE });
    await expect401(unknownKid, 'unauthorized');
  });

  it('rejects an unknown email, a missing email and an unverified email', async () => {
    await expect401(await sign({ email: 'nobody@example.test' }), 'unauthorized');
    await expect401(await sign({ name: 'no email' }), 'unauthorized');
    await expect401(await sign({ email: alice.email, email_verified: false }), 'unauthorized');
  });

  it('rejects an unsigned token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(JSON.stringify({ email: alice.email, iss: ISSUER, aud: AUDIENCE, exp: now + 600 })).toString('base64url');
    await expect401(`${header}.${payload}.`, 'unauthorized');
  });

  it('uses the org_id claim to pick one of several organizations', async () => {
    const second = await server.request('POST', '/platform/organizations', { token: alice.token, body: { name: 'OIDC Second' } });
    expect(second.status).toBe(201);
    const secondId = second.body.id as string;
    await server.request('POST', '/realms', { token: alice.token, body: { name: 'only-in-first' } });

    await expect401(await sign({ email: alice.email, nonce: 'ambiguous' }), 'unauthorized');
    const scoped = await sign({ email: alice.email, org_id: secondId });
    const me = await server.request('GET', '/auth/me', { token: scoped });
    expect(me.body.organization).toEqual({ id: secondId, name: 'OIDC Second' });
    const realms = await server.request('GET', '/realms', { token: scoped });
    expect(realms.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default']);

    const stranger = await server.register('Not Alices');
    await expect401(await sign({ email: alice.email, org_id: stranger.organization.id }), 'unauthorized');
  });

  it('answers 503 while the key set cannot be read, and recovers', async () => {
    const otherKey = await newSigningKey('key-2');
    const flaky = await startJwksServer([otherKey]);
    const other = await startTestServer({ ...OIDC_ENV, JWKS_URL: flaky.url });
    try {
      const bob = await other.register('Flaky IdP');
      const token = await signToken(otherKey, { email: bob.email }, { issuer: ISSUER, audience: AUDIENCE });
      flaky.failWith(500);
      const failing = await other.request('GET', '/auth/me', { token });
      expectError(failing, 503, 'service_unavailable');
      flaky.failWith(null);
      expect((await other.request('GET', '/auth/me', { token })).status).toBe(200);
    } finally {
      await other.stop();
      await flaky.stop();
    }
  });

  it('answers 503 when the key set server is down', async () => {
    const otherKey = await newSigningKey('key-3');
    const gone = await startJwksServer([otherKey]);
    await gone.stop();
    const other = await startTestServer({ ...OIDC_ENV, JWKS_URL: gone.url });
    try {
      const bob = await other.register('Down IdP');
      const token = await signToken(otherKey, { email: bob.email }, { issuer: ISSUER, audience: AUDIENCE });
      const response = await other.request('GET', '/auth/me', { token });
      expectError(response, 503, 'service_unavailable');
    } finally {
      await other.stop();
    }
  });

  it('a local-provider server does not accept RS256 tokens', async () => {
    const local = await startTestServer();
    try {
      const bob = await local.register('Local Only');
      const token = await sign({ email: bob.email });
      const response = await local.request('GET', '/auth/me', { token });
      expectError(response, 401, 'unauthorized');
    } finally {
      await local.stop();
    }
  });
});

describe('OIDC configuration', () => {
  const configError = (env: Record<string, string>): ConfigError => {
    try {
      loadConfig({ DATA_DIR: '/tmp/unused-oidc-config', JWT_SECRET: 'x'.repeat(32), ...env });
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('loadConfig accepted the environment');
  };

  it('requires JWKS_URL, JWT_ISSUER and JWT_AUDIENCE with AUTH_PROVIDER=oidc', () => {
    const noJwks = configError({ AUTH_PROVIDER: 'oidc', JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
    expect(noJwks.variable).toBe('JWKS_URL');
    expect(noJwks.message).toContain('JWKS_URL');
    expect(configError({ AUTH_PROVIDER: 'oidc', JWKS_URL: 'http://127.0.0.1:1/jwks', JWT_AUDIENCE: AUDIENCE }).variable).toBe('JWT_ISSUER');
    expect(configError({ AUTH_PROVIDER: 'oidc', JWKS_URL: 'http://127.0.0.1:1/jwks', JWT_ISSUER: ISSUER }).variable).toBe('JWT_AUDIENCE');
    expect(configError({ AUTH_PROVIDER: 'oidc', ...{ JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }, JWKS_URL: 'ftp://idp/jwks' }).variable).toBe('JWKS_URL');
    expect(configError({ AUTH_PROVIDER: 'saml' }).variable).toBe('AUTH_PROVIDER');
  });
});
