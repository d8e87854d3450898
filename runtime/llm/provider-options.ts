/** What every adapter is built from (only runtime/llm/index.ts builds it). */
import type { RetryOptions } from './retry.js';

export interface ProviderClientOptions {
  /** the resolved endpoint (runtime/llm/index.ts resolveLlmEndpoint); null: the provider's public endpoint */
  readonly baseUrl: string | null;
  /** the key that belongs to that endpoint: `LLM_API_KEY`, or the organization's own `llm_api_key` */
  readonly apiKey: string;
  /** what a 401/403 tells the reader to check, e.g. "LLM_API_KEY" */
  readonly keyName: string;
  /** our own retries (the SDKs' are disabled) */
  readonly retry?: RetryOptions;
  /** time to wait for the response headers of one attempt. @default 120000 */
  readonly timeoutMs?: number;
  /** the egress guard's fetch, for a tenant-chosen base URL; absent: the SDK's own (global fetch) */
  readonly fetch?: typeof fetch | undefined;
}
