/**
 * The official `@runwayml/sdk` pointed at the source's base URL, and the
 * mapping of its failures to the spec's six media errors (plus the usual
 * upstream ones). The SDK itself retries 429/5xx honouring `Retry-After`.
 */
import RunwayML, { APIConnectionError, APIError, APIUserAbortError } from '@runwayml/sdk';
import { ToolError, type NetPort } from '../contract.js';
import type { RunwaySettings } from './settings.js';

/** Runway's public API; always passed, so that the SDK never falls back to RUNWAYML_BASE_URL from the environment */
const RUNWAY_API_URL = 'https://api.dev.runwayml.com';

/** `net`: the egress guard's fetch (the base URL is the tenant's; redirects are judged hop by hop); `maxRetries` 0 for the host's own poller */
export function runwayClient(settings: RunwaySettings, net: NetPort | undefined, maxRetries = 3): RunwayML {
  return new RunwayML({
    apiKey: settings.apiKey,
    baseURL: (settings.baseUrl ?? RUNWAY_API_URL).replace(/\/+$/, ''),
    maxRetries,
    ...(net === undefined ? {} : { fetch: net.fetch }),
  });
}

interface RunwayErrorBody {
  readonly error?: string;
  readonly issues?: readonly { readonly path?: readonly (string | number)[]; readonly message?: string }[];
}

/** what a 400 is about: the message, and the request fields its issues name */
function describe400(body: unknown): { message: string; fields: string[] } {
  const parsed = (typeof body === 'object' && body !== null ? body : {}) as RunwayErrorBody;
  const fields = (parsed.issues ?? []).map((issue) => String(issue.path?.[0] ?? ''));
  const message = [parsed.error, ...(parsed.issues ?? []).map((issue) => issue.message)].filter(Boolean).join('; ');
  return { message: message || 'bad request', fields };
}

/** Maps an SDK failure to a ToolError; an abort stays an abort. */
function runwayFailure(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof APIUserAbortError || signal.aborted) return signal.reason ?? error;
  const refused = ToolError.within(error); // the egress guard's refusal, under the SDK's connection error
  if (refused !== null) return refused;
  if (error instanceof APIConnectionError) return new ToolError('upstream_unreachable', `Runway cannot be reached: ${error.message}`, { retryable: true });
  if (!(error instanceof APIError)) return error;
  const failure = error as APIError<number | undefined, Headers | undefined, object | undefined>;
  const status: number = failure.status ?? 0;
  if (status === 401) return new ToolError('unauthorized', 'Runway refused the API key (401): it is invalid or revoked', { status });
  if (status === 400) {
    const { message, fields } = describe400(failure.error);
    const details = { status, upstream_message: message };
    if (/credit/i.test(message)) return new ToolError('insufficient_credits', 'the Runway account has not enough credits for this generation', details);
    if (fields.includes('ratio') || /\bratio\b/i.test(message))
      return new ToolError('unsupported_ratio', `Runway refused the ratio: ${message} (use 16:9, 1:1 or 9:16)`, details);
    if (fields.includes('promptImage') || /promptImage|asset|image url/i.test(message)) {
      return new ToolError('invalid_image_url', `the source image cannot be used: ${message}`, details);
    }
    if (/moderation|safety|content polic/i.test(message)) return new ToolError('generation_failed', `Runway rejected the prompt: ${message}`, details);
    return new ToolError('invalid_request', `Runway refused the request: ${message}`, { ...details, fields });
  }
  if (status === 404) return new ToolError('not_found', 'Runway has no such task (404): the job id is wrong or the task was deleted', { status });
  if (status === 429) {
    const retryAfter = Number(failure.headers?.get('retry-after') ?? NaN);
    return new ToolError('rate_limited_upstream', 'Runway is rate limiting these requests (concurrency or daily limit); try again later', {
      status,
      retryable: true,
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retry_after_s: retryAfter } : {}),
    });
  }
  return new ToolError('upstream_error', `Runway answered ${status}: ${error.message}`, { status, retryable: status >= 500 });
}

/** Runs one SDK call with the run's signal, failures mapped. */
export async function runwayCall<T>(signal: AbortSignal, call: (options: { signal: AbortSignal }) => PromiseLike<T>): Promise<T> {
  signal.throwIfAborted();
  try {
    return await call({ signal });
  } catch (error) {
    throw runwayFailure(error, signal);
  }
}
