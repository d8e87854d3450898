/**
 * /settings: the organization's singleton settings (LLM provider, embeddings,
 * approval timeout) plus its name, which lives on the organization record.
 *
 * PUT writes the whole desired state (what the provisioning provider does):
 * an omitted field goes back to its default; `organization_name`, which has no
 * default, stays as it is when omitted. PATCH changes only the fields given.
 * Renaming the organization is an organization-level change, so it also needs
 * `org:manage` (owners have it, admins do not).
 *
 * `llm_api_key` is write-only and follows `llm_base_url`: the operator's
 * LLM_API_KEY only ever goes to the operator's endpoint, so an organization that
 * points runs at its own URL brings its own key, given in the same request
 * whenever the URL changes (the masked value does not count). Clearing the URL
 * drops the key; a key without an organization URL is refused.
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { MASKED_LLM_API_KEY, OrgLlmKeys } from '../../runtime/llm/index.js';
import { assertEgressAllowed } from '../../runtime/net/egress.js';
import { SETTINGS_DEFAULTS, type SettingsFields } from '../../domains/organizations.js';
import { UniqueViolation, type OrgId, type Patch } from '../../runtime/store/types.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { stripUndefined } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

/** 7 days: an approval nobody answers within a week is not coming */
const MAX_APPROVAL_TIMEOUT_SECS = 604_800;

const modelName = z.string().trim().min(1).max(200);

const settingsInput = z.strictObject({
  organization_name: safeName(z.string().trim().min(1, { message: 'organization_name must not be empty' }).max(200)),
  llm_provider: z.enum(['openai', 'anthropic'], { message: 'llm_provider is "openai", "anthropic" or null' }).nullable(),
  llm_model: modelName.nullable(),
  llm_base_url: z
    .url({ protocol: /^https?$/, message: 'llm_base_url must be an http or https URL' })
    .max(2048)
    .nullable(),
  llm_api_key: z
    .string()
    .trim()
    .min(1, { message: 'llm_api_key must not be empty (null removes it)' })
    .max(4096)
    .nullable()
    .describe('write-only: the key for this organization\'s own llm_base_url, required whenever llm_base_url changes to a URL; reads show "********"'),
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
  llm_api_key: z.literal(MASKED_LLM_API_KEY).nullable().describe('"********" when the organization has its own key, null when not'),
  embedding_model: z.string().nullable(),
  auto_embed_on_ingest: z.boolean(),
  approval_timeout_secs: z.number().int(),
});

const keyRefused = (message: string): ServiceError =>
  new ServiceError('validation_error', `invalid body: llm_api_key: ${message}`, { issues: [{ path: 'llm_api_key', message }] });

const present = (settings: SettingsFields, organizationName: string) => ({
  organization_name: organizationName,
  llm_provider: settings.llm_provider,
  llm_model: settings.llm_model,
  llm_base_url: settings.llm_base_url,
  llm_api_key: settings.llm_api_key_sealed ? MASKED_LLM_API_KEY : null,
  embedding_model: settings.embedding_model,
  auto_embed_on_ingest: settings.auto_embed_on_ingest,
  approval_timeout_secs: settings.approval_timeout_secs,
});

export function settingsRoutes({ collections, config, egress }: Services): AnyRoute[] {
  const { settings, organizations } = collections;
  const keys = new OrgLlmKeys(config.auth.jwtSecret);

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

  /**
   * The sealed key a write leaves for the URL it leaves (undefined: keep the stored one).
   * @throws validation_error naming llm_api_key: a new URL without a new key, or a key without a URL
   */
  const nextSealedKey = (org: OrgId, current: SettingsFields, nextUrl: string | null, given: string | null | undefined): string | null | undefined => {
    const key = given === MASKED_LLM_API_KEY ? undefined : given;
    if (nextUrl === null) {
      if (typeof key === 'string') {
        throw keyRefused("an organization's own key goes with its own llm_base_url: set llm_base_url in the same request (without one, runs use the operator's endpoint and key)");
      }
      return null;
    }
    if (nextUrl !== current.llm_base_url && typeof key !== 'string') {
      const masked = given === MASKED_LLM_API_KEY ? ' (the masked value does not count)' : '';
      throw keyRefused(`is required when llm_base_url changes: the organization's endpoint needs its own key, given in the same request${masked}`);
    }
    if (key === undefined) return undefined;
    return key === null ? null : keys.seal(org, nextUrl, key);
  };

  /** The store patch of a PUT (`whole`) or PATCH body, the key sealed for the URL it goes with. */
  const patchOf = async (org: OrgId, body: SettingsBody, whole: boolean): Promise<Patch<SettingsFields>> => {
    const { organization_name: _name, llm_api_key: givenKey, ...fields } = body;
    const current = await read(org);
    const nextUrl = body.llm_base_url !== undefined ? body.llm_base_url : whole ? null : current.llm_base_url;
    const sealed = nextSealedKey(org, current, nextUrl, givenKey);
    if (!whole) {
      // a store patch's `undefined` deletes the field; an omitted PATCH field must stay as it is
      return stripUndefined({ ...fields, llm_api_key_sealed: sealed });
    }
    // a write-only key cannot be read back to be sent again: PUT keeps it while the URL stays
    return { ...SETTINGS_DEFAULTS, ...stripUndefined(fields), llm_api_key_sealed: sealed === undefined ? (current.llm_api_key_sealed ?? null) : sealed };
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
      summary: 'Write the whole desired state (omitted fields reset to defaults; organization_name kept when omitted; llm_api_key kept while llm_base_url stays)',
      body: settingsBody, response: settingsSchema,
      handler: async ({ auth, body }) => apply(auth, body, await patchOf(auth.orgId, body, true)),
    }),
    route({
      method: 'PATCH', path: '/settings', tag: 'settings', auth: 'bearer', permission: 'settings:manage',
      summary: 'Change the fields given (a changed llm_base_url needs llm_api_key in the same request)', body: settingsBody, response: settingsSchema,
      handler: async ({ auth, body }) => apply(auth, body, await patchOf(auth.orgId, body, false)),
    }),
  ];
}
