/** What every adapter is built from. */
import type { RetryOptions } from './retry.js';

export interface ProviderClientOptions {
  /** the settings' `llm_base_url`; null: the provider's public endpoint */
  readonly baseUrl: string | null;
  /** config `LLM_API_KEY` */
  readonly apiKey: string;
  /** our own retries (the SDKs' are disabled) */
  readonly retry?: RetryOptions;
  /** time to wait for the response headers of one attempt. @default 120000 */
  readonly timeoutMs?: number;
  /** the egress guard's fetch, for a tenant-chosen base URL; absent: the SDK's own (global fetch) */
  readonly fetch?: typeof fetch | undefined;
}
