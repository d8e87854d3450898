/**
 * /policies/sources (feature `policies`): where Rego modules come from besides
 * the policies themselves: a git repository synced on demand, or modules given
 * inline. An enabled source's modules join the organization's bundle; a
 * policy's rego_file may name one of them as `<source name>/<path>`.
 */
import { z } from 'zod';
import { MASKED_SSH_KEY } from '../../domains/policies/source-secrets.js';
import type { PolicySourceDoc } from '../../domains/policies/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** no `/`: a rego_file names a module as `<source name>/<path>` */
const SOURCE_NAME = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'letters, digits, ".", "_" and "-"' });
const MODULE = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(500)
    .regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._/-]+\.rego$/, { message: 'a relative path ending in .rego, without ".."' }),
  rego: z.string().min(1).max(262_144),
});
const SSH_KEY = z.string().min(1).max(16_384).describe(`write-only: a private key for ssh remotes, sealed at rest; reads show "${MASKED_SSH_KEY}"`);

const sourceCreate = z.strictObject({
  name: SOURCE_NAME,
  source_type: z.enum(['git_repo', 'inline']).describe('immutable'),
  git_url: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .describe('https://host/repo.git, ssh://[user@]host[:port]/repo.git or user@host:repo.git (file:// and absolute paths only with POLICY_GIT_ALLOW_LOCAL)'),
  git_branch: z.string().min(1).max(200).default('main'),
  git_path: z.string().max(500).default('').describe('folder in the repository whose *.rego files are loaded (recursively); empty: the root'),
  git_ssh_key: SSH_KEY.optional(),
  modules: z.array(MODULE).min(1).max(100).optional().describe('inline sources: their modules'),
  enabled: z.boolean().default(true),
});
const sourcePatch = z.strictObject({
  name: z.string().optional(),
  source_type: z.string().optional(),
  git_url: z.string().min(1).max(2048).optional(),
  git_branch: z.string().min(1).max(200).optional(),
  git_path: z.string().max(500).optional(),
  git_ssh_key: SSH_KEY.nullable().optional().describe(`a new key, null to remove it, or "${MASKED_SSH_KEY}" to keep it`),
  modules: z.array(MODULE).min(1).max(100).optional(),
  enabled: z.boolean().optional(),
});

const syncError = z.object({ message: z.string(), file: z.string().nullable(), line: z.number().nullable(), column: z.number().nullable() });
const sourceSchema = z.object({
  ...storedSchema,
  name: z.string(),
  source_type: z.enum(['git_repo', 'inline']),
  git_url: z.string().nullable(),
  git_branch: z.string(),
  git_path: z.string(),
  git_ssh_key: z.literal(MASKED_SSH_KEY).nullable().describe(`"${MASKED_SSH_KEY}" when a key is stored, null when not`),
  modules: z
    .array(z.object({ path: z.string(), rego: z.string() }))
    .describe("inline: as given; git_repo: the last good sync's modules (the ones in the bundle)"),
  enabled: z.boolean(),
  last_sync_status: z.enum(['never', 'running', 'succeeded', 'failed']),
  last_sync_error: syncError.nullable(),
  last_synced_at: z.string().nullable().describe('when the last sync attempt ended'),
  commit: z.string().nullable().describe('the commit of the last good sync'),
  created_by: z.string(),
});

const present = (source: PolicySourceDoc) => ({
  id: source.id,
  name: source.name,
  source_type: source.source_type,
  git_url: source.git_url,
  git_branch: source.git_branch,
  git_path: source.git_path,
  git_ssh_key: source.git_ssh_key_sealed === null ? null : MASKED_SSH_KEY,
  modules: source.modules.map(({ path, rego }) => ({ path, rego })),
  enabled: source.enabled,
  last_sync_status: source.last_sync_status,
  last_sync_error: source.last_sync_error,
  last_synced_at: source.last_synced_at,
  commit: source.commit,
  created_by: source.created_by,
  created_at: source.created_at,
  updated_at: source.updated_at,
});

export function policySourceRoutes({ policySourceService: sources }: Services): AnyRoute[] {
  const listPage = createPageResponder(sources.listing, present);
  return [
    route({
      method: 'GET',
      path: '/policies/sources',
      tag: 'policies',
      summary: 'List policy sources (ssh keys masked)',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      query: pageQuery,
      response: pageSchema(sourceSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/policies/sources',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      summary: 'Create a policy source: a git repository (synced by POST /policies/sources/:id/sync) or inline modules (compiled at save)',
      body: sourceCreate,
      response: sourceSchema,
      status: 201,
      creates: true,
      errors: [422],
      handler: async ({ auth, body }) => ({ status: 201, json: present(await sources.create(auth.orgId, auth.userId, body)) }),
    }),
    route({
      method: 'GET',
      path: '/policies/sources/:id',
      tag: 'policies',
      summary: 'Get a policy source (ssh key masked)',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      params: idParams,
      response: sourceSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await sources.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/policies/sources/:id',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      summary: 'Update a policy source (name and source_type are immutable; git changes take effect at the next sync)',
      params: idParams,
      body: sourcePatch,
      response: sourceSchema,
      errors: [422],
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await sources.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/policies/sources/:id',
      tag: 'policies',
      summary: "Delete a policy source (409 while a policy's rego_file names one of its modules)",
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      params: idParams,
      status: 204,
      errors: [409],
      handler: async ({ auth, params }) => {
        await sources.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/policies/sources/:id/sync',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      summary:
        "Sync a git policy source now: fetch the branch, load every *.rego under git_path, compile them with the organization's other enabled policies. " +
        'A module that does not compile fails the sync (422 policy_sync_failed with file, line and column, recorded on the source) and the previous modules stay active; ' +
        '409 sync_in_progress while a sync of the source runs',
      params: idParams,
      response: sourceSchema,
      errors: [409, 422],
      handler: async ({ auth, params }) => ({ status: 200, json: present(await sources.sync(auth.orgId, params.id)) }),
    }),
  ];
}
