/**
 * /skills: instructions agents can load, with an approval workflow.
 *
 * Visibility: an `org` skill is seen by the whole organization; a `user` skill
 * only by its creator (`owner_user_id`): to anyone else it does not exist (404).
 * Slugs are unique per organization across both scopes.
 *
 * Workflow: draft -> (submit) -> pending_approval -> (approve) -> approved
 *                                                 -> (reject)  -> rejected -> (submit) -> ...
 * Only `approved` skills are usable by agents. Changing the `content` of a skill
 * that is not a draft moves it back to `draft` (a reviewer approved that text,
 * not the new one). Any other move answers 409.
 *
 * Four-eyes rule: approve and reject need `skill:manage`, and the caller must
 * not be the one who submitted, unless the caller's role is `owner` (a
 * one-person organization must be able to approve its own skills). API keys act
 * as the user who created them with role `api_key`, so they never self-approve.
 */
import { z } from 'zod';
import type { SkillDoc } from '../../domains/skills/documents.js';
import { visibleTo } from '../../domains/skills/service.js';
import type { Filter } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName, safeText } from '../safe-text.js';
import type { Services } from '../services.js';

const MAX_CONTENT_BYTES = 256 * 1024;
/** content is up to 256 KiB of text; JSON escaping can more than double it on the wire */
const SKILL_BODY_BYTES = 2 * 1024 * 1024;

const SLUG = z
  .string()
  .min(1, { message: 'slug must not be empty' })
  .max(100, { message: 'slug is at most 100 characters' })
  .regex(/^[a-z0-9-]+$/, { message: 'slug uses lowercase a-z, 0-9 and "-" only' });
const VERSION = z
  .string()
  .max(64)
  .regex(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/, { message: 'version is semver-like, e.g. 1.2.0 or 2.0.0-beta.1' });
const TAGS = z.array(safeName(z.string().trim().min(1).max(100))).max(50, { message: 'at most 50 tags' });
const CONTENT = z.string().refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_CONTENT_BYTES, {
  message: `content is at most 256 KiB (${MAX_CONTENT_BYTES} bytes of UTF-8)`,
});
const SKILL_NAME = safeName(z.string().trim().min(1, { message: 'name must not be empty' }).max(200));
const DESCRIPTION = safeText(z.string().max(2000));
const SCOPE = z.enum(['org', 'user'], { message: 'scope is "org" or "user"' });
const STATUS = z.enum(['draft', 'pending_approval', 'approved', 'rejected']);

const skillCreate = z.strictObject({
  name: SKILL_NAME,
  slug: SLUG,
  description: DESCRIPTION.default(''),
  version: VERSION.default('1.0.0'),
  tags: TAGS.default([]),
  content: CONTENT.default(''),
  scope: SCOPE.default('org'),
});
const skillPatch = z.strictObject({
  name: SKILL_NAME.optional(),
  slug: z.string().optional(),
  description: DESCRIPTION.optional(),
  version: VERSION.optional(),
  tags: TAGS.optional(),
  content: CONTENT.optional(),
  scope: z.string().optional(),
});
const reviewBody = z.strictObject({ note: z.string().max(2000).optional() }).optional();

const skillQuery = pageQuery.extend({ status: STATUS.optional(), scope: SCOPE.optional() });

const skillFields = {
  ...storedSchema,
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  version: z.string(),
  tags: z.array(z.string()),
  scope: SCOPE,
  owner_user_id: z.string().nullable(),
  status: STATUS,
  /** true only when approved: the one state agents may use */
  usable: z.boolean(),
  created_by: z.string(),
  submitted_by: z.string().nullable(),
  reviewed_by: z.string().nullable(),
  reviewed_at: z.string().nullable(),
  review_note: z.string().nullable(),
};
const skillSchema = z.object({ ...skillFields, content: z.string() });
/** list items leave out `content` (up to 256 KiB each); GET /skills/:id has it */
const skillSummarySchema = z.object(skillFields);

const summary = (skill: SkillDoc) => ({
  id: skill.id,
  name: skill.name,
  slug: skill.slug,
  description: skill.description,
  version: skill.version,
  tags: skill.tags,
  scope: skill.scope,
  owner_user_id: skill.owner_user_id,
  status: skill.status,
  usable: skill.status === 'approved',
  created_by: skill.created_by,
  submitted_by: skill.submitted_by,
  reviewed_by: skill.reviewed_by,
  reviewed_at: skill.reviewed_at,
  review_note: skill.review_note,
  created_at: skill.created_at,
  updated_at: skill.updated_at,
});
const present = (skill: SkillDoc) => ({ ...summary(skill), content: skill.content });

export function skillRoutes({ skills }: Services): AnyRoute[] {
  const listPage = createPageResponder(skills.listing, summary);

  const review = (action: 'approve' | 'reject', summaryText: string): AnyRoute =>
    route({
      method: 'POST',
      path: `/skills/:id/${action}`,
      tag: 'skills',
      summary: summaryText,
      auth: 'bearer',
      permission: 'skill:manage',
      params: idParams,
      body: reviewBody,
      response: skillSchema,
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: present(await skills.review(auth.orgId, auth, params.id, action, body?.note ?? null)),
      }),
    });

  return [
    route({
      method: 'GET',
      path: '/skills',
      tag: 'skills',
      summary: 'List the skills the caller can see (filters: status, scope)',
      auth: 'bearer',
      permission: 'skill:read',
      query: skillQuery,
      response: pageSchema(skillSummarySchema),
      handler: async ({ auth, query }) => {
        const filter: Record<string, Filter[string]> = { visible_to: visibleTo(auth.userId) };
        if (query.status !== undefined) filter['status'] = query.status;
        if (query.scope !== undefined) filter['scope'] = query.scope;
        return listPage(auth.orgId, query, filter);
      },
    }),
    route({
      method: 'POST',
      path: '/skills',
      tag: 'skills',
      summary: 'Create a skill (starts as draft)',
      auth: 'bearer',
      permission: 'skill:manage',
      body: skillCreate,
      response: skillSchema,
      status: 201,
      creates: true,
      maxBodyBytes: SKILL_BODY_BYTES,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await skills.create(auth.orgId, auth, body)) }),
    }),
    route({
      method: 'GET',
      path: '/skills/:id',
      tag: 'skills',
      summary: 'Get a skill by id or slug',
      auth: 'bearer',
      permission: 'skill:read',
      params: idParams,
      response: skillSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await skills.get(auth.orgId, auth, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/skills/:id',
      tag: 'skills',
      auth: 'bearer',
      permission: 'skill:manage',
      summary: 'Update a skill (slug and scope are immutable; new content sends it back to draft)',
      params: idParams,
      body: skillPatch,
      response: skillSchema,
      maxBodyBytes: SKILL_BODY_BYTES,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await skills.update(auth.orgId, auth, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/skills/:id',
      tag: 'skills',
      summary: 'Delete a skill',
      auth: 'bearer',
      permission: 'skill:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await skills.delete(auth.orgId, auth, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/skills/:id/submit',
      tag: 'skills',
      summary: 'Submit a draft or rejected skill for approval',
      auth: 'bearer',
      permission: 'skill:manage',
      params: idParams,
      response: skillSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await skills.submit(auth.orgId, auth, params.id)) }),
    }),
    review('approve', 'Approve a pending skill (not by its submitter, unless owner)'),
    review('reject', 'Reject a pending skill (not by its submitter, unless owner)'),
  ];
}
