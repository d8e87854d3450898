/**
 * /activity: the organization's feed (runs started and ended, approvals,
 * webhook deliveries, source syncs, policy changes) and /activity/audit-log
 * (who changed what: every successful create/update/delete, logins, key
 * rotations, policy denials). Both oldest first like every list here, paged
 * with signed cursors, filtered by kind, actor (id, or a user's email) and a
 * `since`/`until` window (inclusive).
 */
import { z } from 'zod';
import type { ActivityDoc, AuditEntryDoc } from '../../domains/activity/types.js';
import { ACTIVITY_KINDS } from '../../domains/activity/types.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** a kind, or its family (`run` = `run.started` and `run.ended`) */
const ACTIVITY_FAMILIES = [...new Set(ACTIVITY_KINDS.map((kind) => kind.slice(0, kind.indexOf('.'))))];

const instant = (name: string) =>
  z
    .string()
    .datetime({ offset: true, message: `${name} must be an ISO 8601 date-time` })
    .optional();
const windowQuery = {
  actor: z.string().min(1).max(254).optional().describe("the actor's id (user or API key), or a user's email"),
  since: instant('since'),
  until: instant('until'),
};
const activityQuery = pageQuery.extend({ kind: z.enum([...ACTIVITY_KINDS, ...ACTIVITY_FAMILIES]).optional(), ...windowQuery });
const auditQuery = pageQuery.extend({
  kind: z.string().min(1).max(100).optional().describe('the resource kind, e.g. `realm`, `api_key`, `session`, `tool_call`'),
  action: z.string().min(1).max(100).optional().describe('e.g. `create`, `update`, `delete`, `login`, `login_failed`, `rotate`, `deny`'),
  ...windowQuery,
});

const actorSchema = z.object({ type: z.enum(['user', 'api_key', 'system']), id: z.string().nullable(), email: z.string().nullable() });
const refSchema = z.object({ kind: z.string(), id: z.string().nullable() });
const detailsSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));
const activitySchema = z.object({
  ...storedSchema,
  kind: z.enum(ACTIVITY_KINDS),
  actor: actorSchema,
  subject: refSchema,
  summary: z.string(),
  details: detailsSchema,
  at: z.string(),
});
const auditSchema = z.object({
  ...storedSchema,
  actor: actorSchema,
  action: z.string(),
  resource: refSchema,
  route: z.string().nullable(),
  status: z.number().int().nullable(),
  request_id: z.string().nullable(),
  details: detailsSchema,
  at: z.string(),
});

const presentActivity = (entry: ActivityDoc) => ({
  id: entry.id,
  kind: entry.kind,
  actor: entry.actor,
  subject: entry.subject,
  summary: entry.summary,
  details: entry.details,
  at: entry.at,
  created_at: entry.created_at,
  updated_at: entry.updated_at,
});
const presentAudit = (entry: AuditEntryDoc) => ({
  id: entry.id,
  actor: entry.actor,
  action: entry.action,
  resource: entry.resource,
  route: entry.route,
  status: entry.status,
  request_id: entry.request_id,
  details: entry.details,
  at: entry.at,
  created_at: entry.created_at,
  updated_at: entry.updated_at,
});

export function activityRoutes({ activityService }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/activity',
      tag: 'activity',
      auth: 'bearer',
      permission: 'activity:read',
      summary: "The organization's activity feed: runs started and ended, approvals, webhook deliveries, source syncs, policy changes",
      query: activityQuery,
      response: pageSchema(activitySchema),
      // `query` is the pipeline's object: it carries the cursor scope
      handler: async ({ auth, query }) => ({
        status: 200,
        json: pageEnvelope(query, await activityService.feed(auth.orgId, listOptions(query), query), presentActivity),
      }),
    }),
    route({
      method: 'GET',
      path: '/activity/audit-log',
      tag: 'activity',
      auth: 'bearer',
      permission: 'audit:read',
      summary: 'The audit log: every successful create, update and delete, logins (and failed ones), key rotations, policy denials',
      query: auditQuery,
      response: pageSchema(auditSchema),
      handler: async ({ auth, query }) => ({
        status: 200,
        json: pageEnvelope(query, await activityService.auditLog(auth.orgId, listOptions(query), query), presentAudit),
      }),
    }),
  ];
}
