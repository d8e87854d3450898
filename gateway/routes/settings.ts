/**
 * /settings: the organization's singleton settings (LLM provider, embeddings,
 * approval timeout) plus its name, which lives on the organization record.
 *
 * PUT writes the whole desired state (what the provisioning provider does):
 * an omitted field goes back to its default; `organization_name`, which has no
 * default, stays as it is when omitted. PATCH changes only the fields given.
 * Renaming the organization is an organization-level change, so it also needs
 * `org:manage` (owners have it, admins do not).
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { assertEgressAllowed } from '../../runtime/net/egress.js';
import { SETTINGS_DEFAULTS, type SettingsFields } from '../../runtime/organizations.js';
import { UniqueViolation, type OrgId, type Patch } from '../../runtime/store/types.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { stripUndefined } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** 7 days: an approval nobody answers within a week is not coming */
const MAX_APPROVAL_TIMEOUT_SECS = 604_800;

const modelName = z.string().trim().min(1).max(200);

const settingsInput = z.strictObject({
  organization_name: z.string().trim().min(1, { message: 'organization_name must not be empty' }).max(200),
  llm_provider: z.enum(['openai', 'anthropic'], { message: 'llm_provider is "openai", "anthropic" or null' }).nullable(),
  llm_model: modelName.nullable(),
  llm_base_url: z
    .url({ protocol: /^https?$/, message: 'llm_base_url must be an http or https URL' })
    .max(2048)
    .nullable(),
  embedding_model: modelName.nullable(),
  auto_embed_on_ingest: z.boolean(),
  approval_timeout_secs: z
    .number()
    .int({ message: 'approval_timeout_secs must be an integer' })
    .min(1, { message: 'approval_timeout_secs is at least 1' })
    .max(MAX_APPROVAL_TIMEOUT_SECS, { message: `approval_timeout_secs is at most ${MAX_APPROVAL_TIMEOUT_SECS}` }),
});
/** PUT and PATCH read the same fields; they differ in what an omitted field means. */
const settingsBody = settingsInput.partial();
type SettingsBody = z.output<typeof settingsBody>;

const settingsSchema = z.object({
  organization_name: z.string(),
  llm_provider: z.enum(['openai', 'anthropic']).nullable(),
  llm_model: z.string().nullable(),
  llm_base_url: z.string().nullable(),
  embedding_model: z.string().nullable(),
  auto_embed_on_ingest: z.boolean(),
  approval_timeout_secs: z.number().int(),
});

const present = (settings: SettingsFields, organizationName: string) => ({
  organization_name: organizationName,
  llm_provider: settings.llm_provider,
  llm_model: settings.llm_model,
  llm_base_url: settings.llm_base_url,
  embedding_model: settings.embedding_model,
  auto_embed_on_ingest: settings.auto_embed_on_ingest,
  approval_timeout_secs: settings.approval_timeout_secs,
});

export function settingsRoutes({ collections, egress }: Services): AnyRoute[] {
  const { settings, organizations } = collections;

  const organizationName = async (org: OrgId): Promise<string> => {
    const organization = await organizations.get(org);
    if (!organization) throw new ServiceError('not_found', 'organization not found');
    return organization.name;
  };

  /** The stored settings; defaults for an organization provisioned before settings existed. */
  const read = async (org: OrgId): Promise<SettingsFields> => (await settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;

  const write = async (org: OrgId, patch: Patch<SettingsFields>): Promise<SettingsFields> => {
    // two tries: a concurrent first write may create the singleton between our read and insert
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const existing = await settings.findOne(org, { singleton: true });
      if (existing) {
        const updated = await settings.update(org, existing.id, patch);
        if (updated) return updated;
        continue;
      }
      try {
        return await settings.insert(org, { singleton: true, ...SETTINGS_DEFAULTS, ...stripUndefined(patch) });
      } catch (error) {
        if (!(error instanceof UniqueViolation)) throw error;
      }
    }
    throw new ServiceError('conflict', 'settings changed concurrently; retry');
  };

  const rename = async (auth: AuthContext, name: string | undefined): Promise<string> => {
    const current = await organizationName(auth.orgId);
    if (name === undefined || name === current) return current;
    if (!auth.permissions.has('org:manage')) {
      throw new ServiceError('forbidden', 'renaming the organization needs the permission "org:manage"', { permission: 'org:manage' });
    }
    const renamed = await organizations.update(auth.orgId, { name });
    if (!renamed) throw new ServiceError('not_found', 'organization not found');
    return renamed.name;
  };

  const apply = async (auth: AuthContext, body: SettingsBody, patch: Patch<SettingsFields>) => {
    // the organization's LLM endpoint is reached for it: a refused literal address is refused now, names when called
    if (typeof body.llm_base_url === 'string') assertEgressAllowed(egress, body.llm_base_url, 'llm_base_url');
    // rename first: it is the only step that can be refused after validation
    const name = await rename(auth, body.organization_name);
    return { status: 200, json: present(await write(auth.orgId, patch), name) };
  };

  return [
    route({
      method: 'GET', path: '/settings', tag: 'settings', summary: 'The organization settings', auth: 'bearer',
      permission: 'settings:read', response: settingsSchema,
      handler: async ({ auth }) => ({ status: 200, json: present(await read(auth.orgId), await organizationName(auth.orgId)) }),
    }),
    route({
      method: 'PUT', path: '/settings', tag: 'settings', auth: 'bearer', permission: 'settings:manage',
      summary: 'Write the whole desired state (omitted fields reset to defaults; organization_name kept when omitted)',
      body: settingsBody, response: settingsSchema,
      handler: async ({ auth, body }) => {
        const { organization_name: _name, ...fields } = body;
        return apply(auth, body, { ...SETTINGS_DEFAULTS, ...stripUndefined(fields) });
      },
    }),
    route({
      method: 'PATCH', path: '/settings', tag: 'settings', auth: 'bearer', permission: 'settings:manage',
      summary: 'Change the fields given', body: settingsBody, response: settingsSchema,
      handler: async ({ auth, body }) => {
        const { organization_name: _name, ...fields } = body;
        // a store patch's `undefined` deletes the field; an omitted PATCH field must stay as it is
        return apply(auth, body, stripUndefined(fields));
      },
    }),
  ];
}
