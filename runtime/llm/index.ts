/**
 * Picks the endpoint and the adapter an organization's settings name. The
 * service starts without any LLM: the missing pieces surface only when a run or
 * chat asks for a model, as LlmError `llm_unconfigured` naming what is missing.
 */
import { createAnthropicProvider } from './anthropic-provider.js';
import { createOpenAiProvider } from './openai-provider.js';
import { OrgLlmKeys } from './org-key.js';
import type { ProviderClientOptions } from './provider-options.js';
import type { RetryOptions } from './retry.js';
import { LlmError, type LlmProvider } from './types.js';

export * from './types.js';
export { costUsd, priceOf, FALLBACK_PRICE } from './prices.js';
export { OrgLlmKeys, MASKED_LLM_API_KEY } from './org-key.js';

/** The model fields of the organization settings (SettingsDoc fits). */
export interface LlmSettings {
  readonly llm_provider?: string | null;
  readonly llm_model?: string | null;
}

/** The endpoint fields of the organization settings (SettingsDoc fits). */
export interface OrgLlmSettings extends LlmSettings {
  readonly llm_base_url?: string | null;
  /** the organization's own key, sealed by OrgLlmKeys (bound to the organization and llm_base_url) */
  readonly llm_api_key_sealed?: string | null;
}

/** The operator's side (ServiceConfig fits). */
export interface LlmOperatorConfig {
  /** `LLM_BASE_URL`; null: the provider's official API */
  readonly llmBaseUrl: string | null;
  /** `LLM_API_KEY` */
  readonly llmApiKey: string | null;
  /** the root the organization keys are sealed under */
  readonly auth: { readonly jwtSecret: Uint8Array };
}

/** Where the model calls go and with whose key. */
export interface LlmEndpoint {
  /** null: the provider's official API */
  readonly baseUrl: string | null;
  readonly apiKey: string | null;
  /**
   * `operator`: LLM_BASE_URL (or the official API) with LLM_API_KEY; `organization`: the
   * tenant's own llm_base_url and llm_api_key (the calls an egress guard must wrap)
   */
  readonly owner: 'operator' | 'organization';
}

export interface CreateLlmProviderOptions {
  /** backoff of 429/5xx/connection failures; tests inject `sleep` */
  readonly retry?: RetryOptions;
  /** time to wait for the response headers of one attempt. @default 120000 */
  readonly timeoutMs?: number;
  /** the egress guard's fetch: used only when the endpoint is the organization's own `llm_base_url` */
  readonly fetch?: typeof fetch;
}

const LLM_PROVIDERS = ['openai', 'anthropic'] as const;

const ORG_KEY_MISSING = "the organization's llm_base_url needs its own llm_api_key in /settings";

function blank(value: string | null | undefined): value is null | undefined {
  return value === null || value === undefined || value.trim() === '';
}

/**
 * The one rule for where a run's model calls go, used by chat, tasks and channel
 * bindings: an organization with its own `llm_base_url` uses its own sealed
 * `llm_api_key` there; every other organization uses the operator's
 * `LLM_BASE_URL` (or the official API) with `LLM_API_KEY`. The operator's key
 * never goes to an organization's URL.
 * @throws LlmError `llm_unconfigured` when the organization's URL has no key, or its key does not open
 */
export function resolveLlmEndpoint(orgId: string, settings: OrgLlmSettings, operator: LlmOperatorConfig): LlmEndpoint {
  if (blank(settings.llm_base_url)) {
    return { baseUrl: operator.llmBaseUrl, apiKey: operator.llmApiKey, owner: 'operator' };
  }
  const baseUrl = settings.llm_base_url;
  const sealed = settings.llm_api_key_sealed;
  if (blank(sealed)) throw new LlmError('llm_unconfigured', `no LLM is configured: ${ORG_KEY_MISSING}`);
  let apiKey: string;
  try {
    apiKey = new OrgLlmKeys(operator.auth.jwtSecret).open(orgId, baseUrl, sealed);
  } catch {
    throw new LlmError(
      'llm_unconfigured',
      "no LLM is configured: the organization's llm_api_key cannot be opened (the server secret changed, or it was set for another llm_base_url); set llm_api_key again in /settings",
    );
  }
  return { baseUrl, apiKey, owner: 'organization' };
}

/** `resolveLlmEndpoint`, then `createLlmProvider`: what every run calls. */
export function resolveLlmProvider(
  orgId: string,
  settings: OrgLlmSettings,
  operator: LlmOperatorConfig,
  options: CreateLlmProviderOptions = {},
): { provider: LlmProvider; model: string; endpoint: LlmEndpoint } {
  const endpoint = resolveLlmEndpoint(orgId, settings, operator);
  return { ...createLlmProvider(settings, endpoint, options), endpoint };
}

/**
 * The one place adapters are built (and where a guarded `fetch` would be passed to the SDKs).
 * @throws LlmError `llm_unconfigured` when the provider, the model or the endpoint's key
 * is missing, or the provider is not one we speak
 */
export function createLlmProvider(
  settings: LlmSettings,
  endpoint: LlmEndpoint,
  options: CreateLlmProviderOptions = {},
): { provider: LlmProvider; model: string } {
  const { apiKey } = endpoint;
  const missing: string[] = [];
  if (blank(settings.llm_provider)) missing.push('llm_provider (settings)');
  if (blank(settings.llm_model)) missing.push('llm_model (settings)');
  if (blank(apiKey)) missing.push(endpoint.owner === 'operator' ? 'LLM_API_KEY (environment)' : 'llm_api_key (settings)');
  if (missing.length > 0 || blank(settings.llm_provider) || blank(settings.llm_model) || blank(apiKey)) {
    throw new LlmError('llm_unconfigured', `no LLM is configured: missing ${missing.join(', ')}`);
  }
  const name = settings.llm_provider.trim();
  const clientOptions: ProviderClientOptions = {
    baseUrl: blank(endpoint.baseUrl) ? null : endpoint.baseUrl.trim(),
    apiKey,
    keyName: endpoint.owner === 'operator' ? 'LLM_API_KEY' : "the organization's llm_api_key in /settings",
    retry: options.retry,
    timeoutMs: options.timeoutMs,
    // the operator's endpoint is not tenant-chosen; an organization's own URL goes through the egress guard
    fetch: endpoint.owner === 'organization' ? options.fetch : undefined,
  };
  let provider: LlmProvider;
  if (name === 'openai') provider = createOpenAiProvider(clientOptions);
  else if (name === 'anthropic') provider = createAnthropicProvider(clientOptions);
  else throw new LlmError('llm_unconfigured', `llm_provider "${name}" is not supported: use ${LLM_PROVIDERS.join(' or ')}`);
  return { provider, model: settings.llm_model.trim() };
}
