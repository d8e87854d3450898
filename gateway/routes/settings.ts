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
import type { OrgSettings } from '../../domains/settings/service.js';
import { MASKED_LLM_API_KEY } from '../../runtime/llm/index.js';
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
  context_tier: z
    .enum(['basic', 'advanced'], { message: 'context_tier is "basic" or "advanced"' })
    .describe('advanced opens KQL over context tables (POST /context/kql)'),
});
/** PUT and PATCH read the same fields; they differ in what an omitted field means. */
const settingsBody = settingsInput.partial();

const settingsSchema = z.object({
  organization_name: z.string(),
  llm_provider: z.enum(['openai', 'anthropic']).nullable(),
  llm_model: z.string().nullable(),
  llm_base_url: z.string().nullable(),
  llm_api_key: z.literal(MASKED_LLM_API_KEY).nullable().describe('"********" when the organization has its own key, null when not'),
  embedding_model: z.string().nullable(),
  auto_embed_on_ingest: z.boolean(),
  approval_timeout_secs: z.number().int(),
  context_tier: z.enum(['basic', 'advanced']),
});

const present = ({ settings, organizationName }: OrgSettings) => ({
  organization_name: organizationName,
  llm_provider: settings.llm_provider,
  llm_model: settings.llm_model,
  llm_base_url: settings.llm_base_url,
  llm_api_key: settings.llm_api_key_sealed ? MASKED_LLM_API_KEY : null,
  embedding_model: settings.embedding_model,
  auto_embed_on_ingest: settings.auto_embed_on_ingest,
  approval_timeout_secs: settings.approval_timeout_secs,
  context_tier: settings.context_tier ?? 'basic',
});

export function settingsRoutes({ settings }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/settings',
      tag: 'settings',
      summary: 'The organization settings',
      auth: 'bearer',
      permission: 'settings:read',
      response: settingsSchema,
      handler: async ({ auth }) => ({ status: 200, json: present(await settings.get(auth.orgId)) }),
    }),
    route({
      method: 'PUT',
      path: '/settings',
      tag: 'settings',
      auth: 'bearer',
      permission: 'settings:manage',
      summary:
        'Write the whole desired state (omitted fields reset to defaults; organization_name kept when omitted; llm_api_key kept while llm_base_url stays)',
      body: settingsBody,
      response: settingsSchema,
      handler: async ({ auth, body }) => ({ status: 200, json: present(await settings.replace(auth, body)) }),
    }),
    route({
      method: 'PATCH',
      path: '/settings',
      tag: 'settings',
      auth: 'bearer',
      permission: 'settings:manage',
      summary: 'Change the fields given (a changed llm_base_url needs llm_api_key in the same request)',
      body: settingsBody,
      response: settingsSchema,
      handler: async ({ auth, body }) => ({ status: 200, json: present(await settings.change(auth, body)) }),
    }),
  ];
}
