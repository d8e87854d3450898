/**
 * /auth: registration, login, the current user. Password checks (login, and
 * registration with a known email) are throttled per account and per client
 * address: a locked caller gets 429 `rate_limited` with Retry-After before any
 * password is compared.
 */
import { z } from 'zod';
import { normalizeEmail } from '../../runtime/auth/identity.js';
import { LoginThrottle } from '../../runtime/auth/login-throttle.js';
import { ServiceError } from '../../runtime/errors.js';
import type { HttpRequest } from '../http.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

export const EMAIL = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ message: 'email is not a valid address' }));
export const PASSWORD = z.string().min(8, { message: 'password needs at least 8 characters' }).max(1024, { message: 'password is at most 1024 characters' });

export const loginResult = z.object({
  token: z.string(),
  expires_at: z.string(),
  user: z.object({ id: z.string(), email: z.string(), role: z.string() }),
  organization: z.object({ id: z.string(), name: z.string() }),
});

/** The socket peer: forwarded headers are not trusted (there is no trusted-proxy setting). */
const clientAddress = (request: HttpRequest): string => request.remoteAddress ?? 'unknown';

export function authRoutes({ identity, config, supervisor, loginAudit, users }: Services): AnyRoute[] {
  const throttle = new LoginThrottle(config.auth.loginThrottle, () => supervisor.clock.now());

  /**
   * Runs a password check under the throttle: refused unchecked while locked,
   * a failure (`failure` says which errors are one) counts, a success clears the account.
   */
  async function throttled<T>(request: HttpRequest, email: string, check: () => Promise<T>, failure: (error: ServiceError) => boolean): Promise<T> {
    const account = normalizeEmail(email);
    const address = clientAddress(request);
    const wait = throttle.retryAfterSeconds(account, address);
    if (wait > 0) {
      throw new ServiceError(
        'rate_limited',
        `too many failed logins; try again in ${wait} seconds`,
        { retry_after_seconds: wait },
        {
          'retry-after': String(wait),
        },
      );
    }
    try {
      const result = await check();
      throttle.succeeded(account);
      return result;
    } catch (error) {
      if (error instanceof ServiceError && failure(error)) throttle.failed(account, address);
      throw error;
    }
  }

  return [
    route({
      method: 'POST',
      path: '/auth/register',
      tag: 'auth',
      auth: 'public',
      status: 201,
      creates: true,
      summary: 'Create an organization and its owner; answers like login',
      body: z.strictObject({
        email: EMAIL,
        password: PASSWORD,
        organization_name: safeName(z.string().trim().min(1).max(200)),
      }),
      response: loginResult,
      // registering with a known email checks its password (409 when wrong): throttled like login
      handler: async ({ request, body }) => {
        const result = await throttled(
          request,
          body.email,
          () => identity.register(body),
          (error) => error.code === 'conflict',
        );
        const attempt = { email: result.user.email, requestId: request.requestId, route: 'POST /auth/register' };
        await loginAudit.succeeded(attempt, result, 201, 'register');
        return { status: 201, json: result };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/login',
      tag: 'auth',
      auth: 'public',
      summary: 'Exchange email and password for a token scoped to one organization',
      body: z.strictObject({
        email: EMAIL,
        password: z.string().min(1).max(1024),
        organization_id: z.string().min(1).max(100).optional(),
      }),
      response: loginResult,
      // public, so the pipeline's audit does not see it: successes and wrong passwords are audited here
      handler: async ({ request, body }) => {
        const attempt = { email: normalizeEmail(body.email), organizationId: body.organization_id, requestId: request.requestId, route: 'POST /auth/login' };
        try {
          const result = await throttled(
            request,
            body.email,
            () => identity.login(body),
            (error) => error.code === 'invalid_credentials',
          );
          await loginAudit.succeeded(attempt, result, 200);
          return { status: 200, json: result };
        } catch (error) {
          if (error instanceof ServiceError && error.code === 'invalid_credentials') await loginAudit.failed(attempt, error.status, error.code);
          throw error;
        }
      },
    }),
    route({
      method: 'GET',
      path: '/auth/me',
      tag: 'auth',
      auth: 'bearer',
      summary: 'The caller',
      response: z.object({
        id: z.string(),
        email: z.string(),
        role: z.string(),
        kind: z.enum(['user', 'api_key']),
        permissions: z.array(z.string()),
        organization: z.object({ id: z.string(), name: z.string() }),
        /** an API key only: its id, and the sources it is scoped to (null: all) */
        api_key_id: z.string().optional(),
        source_ids: z.array(z.string()).nullable().optional(),
      }),
      handler: async ({ auth }) => {
        const { user, organization } = await users.caller(auth.userId, auth.orgId);
        return {
          status: 200,
          json: {
            id: user.id,
            email: user.email,
            role: auth.role,
            kind: auth.kind,
            permissions: [...auth.permissions].sort(),
            organization: { id: organization.id, name: organization.name },
            ...(auth.apiKeyId ? { api_key_id: auth.apiKeyId, source_ids: auth.sourceIds } : {}),
          },
        };
      },
    }),
  ];
}
