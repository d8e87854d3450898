/** /auth: registration, login, the current user. */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

export const EMAIL = z.string().trim().max(254).pipe(z.email({ message: 'email is not a valid address' }));
export const PASSWORD = z
  .string()
  .min(8, { message: 'password needs at least 8 characters' })
  .max(1024, { message: 'password is at most 1024 characters' });

export const loginResult = z.object({
  token: z.string(),
  expires_at: z.string(),
  user: z.object({ id: z.string(), email: z.string(), role: z.string() }),
  organization: z.object({ id: z.string(), name: z.string() }),
});

export function authRoutes({ identity, collections }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST', path: '/auth/register', tag: 'auth', auth: 'public', status: 201, creates: true,
      summary: 'Create an organization and its owner; answers like login',
      body: z.strictObject({
        email: EMAIL,
        password: PASSWORD,
        organization_name: safeName(z.string().trim().min(1).max(200)),
      }),
      response: loginResult,
      handler: async ({ body }) => ({ status: 201, json: await identity.register(body) }),
    }),
    route({
      method: 'POST', path: '/auth/login', tag: 'auth', auth: 'public',
      summary: 'Exchange email and password for a token scoped to one organization',
      body: z.strictObject({
        email: EMAIL,
        password: z.string().min(1).max(1024),
        organization_id: z.string().min(1).max(100).optional(),
      }),
      response: loginResult,
      handler: async ({ body }) => ({ status: 200, json: await identity.login(body) }),
    }),
    route({
      method: 'GET', path: '/auth/me', tag: 'auth', auth: 'bearer', summary: 'The caller',
      response: z.object({
        id: z.string(), email: z.string(), role: z.string(), kind: z.enum(['user', 'api_key']),
        permissions: z.array(z.string()), organization: z.object({ id: z.string(), name: z.string() }),
      }),
      handler: async ({ auth }) => {
        const user = await collections.users.get(auth.userId);
        const organization = await collections.organizations.get(auth.orgId);
        if (!user || !organization) throw new ServiceError('unauthorized', 'the caller no longer exists');
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
