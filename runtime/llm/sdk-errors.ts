/**
 * Turns the official clients' errors into LlmAttemptError. Both SDKs share one
 * shape (APIError with status/headers/error, APIConnectionError,
 * APIUserAbortError) but each has its own classes, so the adapter passes them in.
 */
import { egressRefusalOf } from '../net/egress.js';
import { retryAfterMs } from '../net/retry-after.js';
import { LlmAttemptError } from './retry.js';
import { LlmError } from './types.js';

interface ApiErrorShape extends Error {
  readonly status?: number;
  readonly headers?: { get(name: string): string | null };
  readonly error?: unknown;
}

type ErrorClass<T extends Error = Error> = abstract new (...args: never[]) => T;

export interface SdkErrorClasses {
  readonly APIError: ErrorClass<ApiErrorShape>;
  readonly APIConnectionError: ErrorClass;
  readonly APIUserAbortError: ErrorClass;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** The provider's own message: `{error:{message}}` (OpenAI) or `{type:'error', error:{message}}` (Anthropic). */
function providerMessage(error: ApiErrorShape): string {
  for (const candidate of [field(error.error, 'message'), field(field(error.error, 'error'), 'message')]) {
    if (typeof candidate === 'string' && candidate !== '') return candidate;
  }
  return error.message.replace(/^\d{3}\s+/, '');
}

function causeText(error: Error): string {
  const cause: unknown = error.cause;
  if (!(cause instanceof Error)) return '';
  const code = field(cause, 'code') ?? field(cause.cause, 'code');
  return typeof code === 'string' ? ` (${code})` : ` (${cause.message})`;
}

/** @param keyName what a 401/403 tells the reader to check: the key's owner differs per endpoint */
export function toAttemptError(error: unknown, provider: string, baseUrl: string, keyName: string, classes: SdkErrorClasses): LlmError {
  if (error instanceof LlmAttemptError) return error;
  if (error instanceof classes.APIUserAbortError) {
    return new LlmAttemptError('llm_aborted', `the ${provider} request was aborted`, undefined);
  }
  const refusal = egressRefusalOf(error);
  // the egress guard refused the tenant's base URL: not an attempt error, a retry would be refused again
  if (refusal !== null) return new LlmError('llm_unreachable', `egress_refused: ${provider} at ${baseUrl}: ${refusal.message}`);
  if (error instanceof classes.APIConnectionError) {
    return new LlmAttemptError('llm_unreachable', `could not reach ${provider} at ${baseUrl}: ${error.message}${causeText(error)}`, undefined);
  }
  if (error instanceof classes.APIError) {
    const shape = error;
    const message = providerMessage(shape);
    if (shape.status === undefined) {
      // an `error` event inside an open stream (e.g. overloaded): a server-side failure
      return new LlmAttemptError('llm_provider_error', `${provider} failed mid-stream: ${message}`, 500);
    }
    const hint = shape.status === 401 || shape.status === 403 ? ` (check ${keyName})` : '';
    const code = shape.status === 429 ? 'llm_rate_limited' : 'llm_provider_error';
    return new LlmAttemptError(code, `${provider} answered ${shape.status}: ${message}${hint}`, shape.status, retryAfterMs(shape.headers));
  }
  if (error instanceof LlmError) return error;
  // reading the body failed (e.g. fetch's `terminated` when the connection drops mid-stream)
  const text = error instanceof Error ? `${error.message}${causeText(error)}` : String(error);
  return new LlmAttemptError('llm_unreachable', `the connection to ${provider} at ${baseUrl} failed: ${text}`, undefined);
}
