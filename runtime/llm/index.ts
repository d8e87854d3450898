/**
 * Picks the adapter an organization's settings name. The service starts without
 * any LLM: the missing pieces surface only when a run or chat asks for a model,
 * as LlmError `llm_unconfigured` naming what is missing.
 */
import { createAnthropicProvider } from './anthropic-provider.js';
import { createOpenAiProvider } from './openai-provider.js';
import type { RetryOptions } from './retry.js';
import { LlmError, type LlmProvider } from './types.js';

export * from './types.js';
export { costUsd, priceOf, DEFAULT_PRICES, FALLBACK_PRICE, type ModelPrice, type PriceTable } from './prices.js';
export type { RetryOptions } from './retry.js';

/** The LLM fields of the organization settings (SettingsDoc fits). */
export interface LlmSettings {
  readonly llm_provider?: string | null;
  readonly llm_model?: string | null;
  readonly llm_base_url?: string | null;
}

export interface CreateLlmProviderOptions {
  /** backoff of 429/5xx/connection failures; tests inject `sleep` */
  readonly retry?: RetryOptions;
  /** time to wait for the response headers of one attempt. @default 120000 */
  readonly timeoutMs?: number;
  /** the egress guard's fetch: used when the base URL is the organization's own `llm_base_url` */
  readonly fetch?: typeof fetch;
}

export const LLM_PROVIDERS = ['openai', 'anthropic'] as const;

function blank(value: string | null | undefined): value is null | undefined {
  return value === null || value === undefined || value.trim() === '';
}

/**
 * @throws LlmError `llm_unconfigured` when the provider, the model or the key
 * (config `LLM_API_KEY`) is missing, or the provider is not one we speak
 */
export function createLlmProvider(
  settings: LlmSettings,
  apiKey: string | null,
  options: CreateLlmProviderOptions = {},
): { provider: LlmProvider; model: string } {
  const missing: string[] = [];
  if (blank(settings.llm_provider)) missing.push('llm_provider (settings)');
  if (blank(settings.llm_model)) missing.push('llm_model (settings)');
  if (blank(apiKey)) missing.push('LLM_API_KEY (environment)');
  if (missing.length > 0 || blank(settings.llm_provider) || blank(settings.llm_model) || blank(apiKey)) {
    throw new LlmError('llm_unconfigured', `no LLM is configured: missing ${missing.join(', ')}`);
  }
  const name = settings.llm_provider.trim();
  const clientOptions = {
    baseUrl: blank(settings.llm_base_url) ? null : settings.llm_base_url.trim(),
    apiKey,
    retry: options.retry,
    timeoutMs: options.timeoutMs,
    fetch: blank(settings.llm_base_url) ? undefined : options.fetch,
  };
  let provider: LlmProvider;
  if (name === 'openai') provider = createOpenAiProvider(clientOptions);
  else if (name === 'anthropic') provider = createAnthropicProvider(clientOptions);
  else throw new LlmError('llm_unconfigured', `llm_provider "${name}" is not supported: use ${LLM_PROVIDERS.join(' or ')}`);
  return { provider, model: settings.llm_model.trim() };
}
