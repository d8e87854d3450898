/**
 * /notifications: the signed-in user's own (approvals waiting for them, their
 * runs that failed, failed source syncs for owners and admins), newest last,
 * with mark-read. Another user's notification answers 404, like another
 * organization's. API keys have no inbox: they answer 403.
 */
import { z } from 'zod';
import type { NotificationDoc } from '../../domains/activity/types.js';
import { NOTIFICATION_KINDS } from '../../domains/activity/types.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { ServiceError } from '../../runtime/errors.js';
import { createPageResponder, pageQuery, pageSchema, queryFlag } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const notificationSchema = z.object({
  ...storedSchema,
  kind: z.enum(NOTIFICATION_KINDS),
  title: z.string(),
  subject: z.object({ kind: z.string(), id: z.string().nullable() }),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  read: z.boolean(),
  read_at: z.string().nullable(),
  at: z.string(),
});

const present = (entry: NotificationDoc) => ({
  id: entry.id,
  kind: entry.kind,
  title: entry.title,
  subject: entry.subject,
  details: entry.details,
  read: entry.read,
  read_at: entry.read_at,
  at: entry.at,
  created_at: entry.created_at,
  updated_at: entry.updated_at,
});

/** the user whose inbox this is */
function inboxOf(auth: AuthContext): string {
  if (auth.kind !== 'user') throw new ServiceError('forbidden', 'notifications belong to a signed-in user; an API key or pipeline token has none');
  return auth.userId;
}

export function notificationRoutes({ activityService }: Services): AnyRoute[] {
  const listPage = createPageResponder(activityService.notificationListing, present);
  return [
    route({
      method: 'GET',
      path: '/notifications',
      tag: 'notifications',
      auth: 'bearer',
      errors: [403],
      summary: "The caller's notifications (`unread=true`: only those not yet read)",
      query: pageQuery.extend({ unread: queryFlag('unread').optional() }),
      response: pageSchema(notificationSchema),
      handler: async ({ auth, query }) => {
        const user = inboxOf(auth);
        return listPage(auth.orgId, query, query.unread === true ? { user_id: user, read: false } : { user_id: user });
      },
    }),
    route({
      method: 'POST',
      path: '/notifications/read-all',
      tag: 'notifications',
      auth: 'bearer',
      errors: [403],
      audit: false,
      summary: 'Marks every unread notification of the caller read',
      response: z.object({ updated: z.number().int() }),
      handler: async ({ auth }) => ({ status: 200, json: { updated: await activityService.readAll(auth.orgId, inboxOf(auth)) } }),
    }),
    route({
      method: 'POST',
      path: '/notifications/:id/read',
      tag: 'notifications',
      auth: 'bearer',
      errors: [403],
      audit: false,
      summary: 'Marks one notification of the caller read',
      params: idParams,
      response: notificationSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await activityService.read(auth.orgId, inboxOf(auth), params.id)) }),
    }),
  ];
}
