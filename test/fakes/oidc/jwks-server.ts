/**
 * A fake OIDC provider's key endpoint: serves `{ keys: [...] }` (RFC 7517 JWK
 * Set) over node:http on 127.0.0.1, the way an identity provider publishes
 * its signing keys at `jwks_uri`. Keys are RS256 pairs made with `jose`; the
 * test signs tokens with the private halves.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk };
}

export interface TokenOptions {
  readonly issuer: string;
  readonly audience: string;
  /** seconds since the epoch; default now + 10 minutes */
  readonly expiresAt?: number;
  /** sign with this key but claim another key id in the header */
  readonly kid?: string;
}

/** An RS256 JWT as an identity provider would issue it. */
export function signToken(key: SigningKey, claims: JWTPayload, options: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: options.kid ?? key.kid })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setSubject(typeof claims['email'] === 'string' ? `idp|${claims['email']}` : 'idp|anonymous')
    .setIssuedAt(now - 5)
    .setExpirationTime(options.expiresAt ?? now + 600)
    .sign(key.privateKey);
}

export interface FakeJwksServer {
  /** the JWKS_URL to configure */
  readonly url: string;
  /** how many times the key set was fetched */
  readonly fetches: number;
  /** answer this status instead of the key set (null: serve the keys) */
  failWith(status: number | null): void;
  stop(): Promise<void>;
}

export async function startJwksServer(keys: readonly SigningKey[]): Promise<FakeJwksServer> {
  let fetches = 0;
  let failure: number | null = null;
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/.well-known/jwks.json') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    fetches += 1;
    if (failure !== null) {
      response.writeHead(failure, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=300' })
      .end(JSON.stringify({ keys: keys.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get fetches() {
      return fetches;
    },
    failWith: (status) => {
      failure = status;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
