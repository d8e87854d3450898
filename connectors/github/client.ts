/**
 * The Octokit for one github config: base URL (Enterprise, proxies, the
 * tests' fake), token or GitHub App installation auth, a retry of rate-limited
 * answers (429, or 403 with an exhausted quota) honouring `Retry-After` /
 * `x-ratelimit-reset`, and upstream failures mapped to ToolErrors.
 */
import { createPrivateKey } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Octokit } from '@octokit/rest';
import { SignJWT } from 'jose';
import { ToolError, type NetPort } from '../contract.js';
import type { GithubConfig } from './config.js';

const MAX_RETRIES = 3;
/** a longer wait than this is not waited for: the call fails with `rate_limited_upstream` */
const MAX_RETRY_DELAY_MS = 30_000;
const USER_AGENT = 'agent-context-service-github-connector';

type Headers = Record<string, string | number | undefined>;

/** Octokit's RequestError, recognised by shape (its package is only a transitive dependency). */
interface RequestError {
  readonly name: 'HttpError';
  readonly status: number;
  readonly message: string;
  readonly response?: { readonly headers: Headers; readonly data?: unknown };
}
const isRequestError = (error: unknown): error is RequestError =>
  (error as { name?: unknown } | null)?.name === 'HttpError' && typeof (error as { status?: unknown }).status === 'number';

/** How long GitHub asks us to wait, or null when the failure is not a rate limit. */
// wall clock: x-ratelimit-reset is GitHub's epoch time
function rateLimitWaitMs(status: number, headers: Headers, now = Date.now()): number | null {
  const retryAfter = Number(headers['retry-after']);
  if ((status === 429 || status === 403) && headers['retry-after'] !== undefined && Number.isFinite(retryAfter)) return retryAfter * 1000;
  if ((status === 429 || status === 403) && String(headers['x-ratelimit-remaining']) === '0') {
    const reset = Number(headers['x-ratelimit-reset']) * 1000;
    return Number.isFinite(reset) ? Math.max(0, reset - now) : 60_000;
  }
  return status === 429 ? 1000 : null;
}

/** GitHub's `{ message }` body, when there is one. */
const messageOf = (error: RequestError): string => {
  const data = error.response?.data as { message?: unknown } | undefined;
  return typeof data?.message === 'string' ? data.message : error.message;
};

/** fetch's own failure (refused, reset, DNS): a TypeError carrying the socket error as its cause */
function isConnectionFailure(error: unknown): boolean {
  return error instanceof TypeError && (error as { cause?: unknown }).cause !== undefined;
}

/** Maps whatever a call threw to a ToolError the model can read (aborts pass through). */
export function githubFailure(error: unknown, signal?: AbortSignal): unknown {
  signal?.throwIfAborted();
  if (ToolError.is(error) || (error as Error)?.name === 'AbortError') return error;
  // Octokit wraps what fetch threw as `cause`: the egress guard's refusal stays `egress_refused`
  const wrapped = ToolError.within(error);
  if (wrapped !== null) return wrapped;
  if (!isRequestError(error)) {
    // only a failed connection is GitHub's; anything else (our own code, the graph) keeps its own error
    return isConnectionFailure(error) ? new ToolError('upstream_unreachable', `GitHub cannot be reached: ${(error as Error).message}`) : error;
  }
  const details = { status: error.status, message: messageOf(error) };
  switch (error.status) {
    case 401:
      return new ToolError('unauthorized', `GitHub refused the credentials (401): ${details.message}`, details);
    case 403: {
      const wait = rateLimitWaitMs(403, error.response?.headers ?? {});
      if (wait !== null)
        return new ToolError('rate_limited_upstream', 'GitHub is rate limiting these requests; try again later', {
          ...details,
          retry_after_s: Math.ceil(wait / 1000),
        });
      return new ToolError('forbidden', `GitHub denied the request (403): ${details.message}`, details);
    }
    case 404:
      return new ToolError('not_found', 'GitHub has no such resource, or the credentials cannot see it (404)', details);
    case 422:
      return new ToolError('invalid_request', `GitHub refused the request (422): ${details.message}`, details);
    case 429:
      return new ToolError('rate_limited_upstream', 'GitHub is rate limiting these requests; try again later', details);
    case 500:
      // Octokit reports a failed fetch (connection refused, DNS) as status 500 without a response
      if (error.response === undefined) return new ToolError('upstream_unreachable', `GitHub cannot be reached: ${error.message}`);
      return new ToolError('upstream_error', `GitHub answered ${error.status}`, details);
    default:
      return new ToolError('upstream_error', `GitHub answered ${error.status}`, details);
  }
}

/** An Octokit with the base URL and the rate-limit retry; `auth` is a token or none. */
function octokitFor(baseUrl: string, auth: string | undefined, net: NetPort | undefined): Octokit {
  const octokit = new Octokit({
    baseUrl,
    userAgent: USER_AGENT,
    ...(auth === undefined ? {} : { auth }),
    log: { debug() {}, info() {}, warn() {}, error() {} },
    // the egress guard's fetch: the base URL is the tenant's, and redirects are judged hop by hop
    ...(net === undefined ? {} : { request: { fetch: net.fetch } }),
  });
  octokit.hook.wrap('request', async (request, options) => {
    const signal = (options.request as { signal?: AbortSignal } | undefined)?.signal;
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(options);
      } catch (error) {
        if (!isRequestError(error) || attempt >= MAX_RETRIES) throw error;
        const wait = rateLimitWaitMs(error.status, error.response?.headers ?? {});
        if (wait === null || wait > MAX_RETRY_DELAY_MS) throw error;
        await sleep(wait, undefined, signal ? { signal } : {});
      }
    }
  });
  return octokit;
}

/** A GitHub App JWT (RS256, issued 60 s in the past against clock drift, 9 minutes valid). */
// wall clock: GitHub checks the app JWT's iat/exp against its own time
async function appJwt(appId: string, privateKeyPem: string, now = Date.now()): Promise<string> {
  // createPrivateKey reads PKCS#1 (what GitHub hands out) as well as PKCS#8
  const key = createPrivateKey(privateKeyPem);
  const seconds = Math.floor(now / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256' })
    .setIssuedAt(seconds - 60)
    .setExpirationTime(seconds + 540)
    .setIssuer(appId)
    .sign(key);
}

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
}
/** installation tokens live an hour: reuse them until a minute before they expire */
const installationTokens = new Map<string, CachedToken>();

/** The app's Octokit (JWT auth): GET /app, installation tokens. */
export async function appOctokit(config: GithubConfig, net: NetPort | undefined): Promise<Octokit> {
  if (config.auth.kind !== 'app') throw new Error('not an app config');
  let jwt: string;
  try {
    jwt = await appJwt(config.auth.app_id, config.auth.private_key);
  } catch (error) {
    throw new ToolError('invalid_private_key', `the GitHub App private key cannot be read: ${(error as Error).message}`);
  }
  return octokitFor(config.baseUrl, jwt, net);
}

async function installationToken(config: GithubConfig, signal: AbortSignal, net: NetPort | undefined): Promise<string> {
  if (config.auth.kind !== 'app') throw new Error('not an app config');
  const cacheKey = `${config.baseUrl}|${config.auth.app_id}|${config.auth.installation_id}`;
  const cached = installationTokens.get(cacheKey);
  // wall clock: the installation token's expiry is GitHub's time
  if (cached && cached.expiresAt - 60_000 > Date.now()) return cached.token;
  const app = await appOctokit(config, net);
  try {
    const { data } = await app.rest.apps.createInstallationAccessToken({ installation_id: Number(config.auth.installation_id), request: { signal } });
    installationTokens.set(cacheKey, { token: data.token, expiresAt: Date.parse(data.expires_at) });
    return data.token;
  } catch (error) {
    throw githubFailure(error, signal);
  }
}

/** The Octokit tools and syncs use: token auth, or an installation token for an App. */
export async function githubClient(config: GithubConfig, signal: AbortSignal, net: NetPort | undefined): Promise<Octokit> {
  const token = config.auth.kind === 'app' ? await installationToken(config, signal, net) : config.auth.token;
  return octokitFor(config.baseUrl, token, net);
}
