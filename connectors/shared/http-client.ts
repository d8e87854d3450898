/**
 * The one HTTP client built-in connectors use for REST APIs without an
 * official SDK (and for the odd call an SDK lacks): base URL, auth headers,
 * JSON in and out, retries of 429/502/503/504 honouring `Retry-After`, and
 * upstream failures mapped to ToolErrors the model can read.
 */
import { ToolError, type NetPort } from '../contract.js';

export interface HttpClientOptions {
  /** e.g. `https://api.vercel.com` or a self-hosted base; a trailing slash is ignored */
  readonly baseUrl: string;
  /** sent on every request (auth, accept, user agent) */
  readonly headers?: Readonly<Record<string, string>>;
  /** names the system in error messages, e.g. `Jenkins` */
  readonly system: string;
  /** retries of a 429/502/503/504 answer; default 3 */
  readonly maxRetries?: number;
  /** a `Retry-After` longer than this is not waited for: the call fails with `rate_limited_upstream`; default 30 s */
  readonly maxRetryDelayMs?: number;
  /** delay before the first retry when the answer names none; doubles each time; default 500 ms */
  readonly baseRetryDelayMs?: number;
  /** the egress guard (the tool context's `net`): the base URL comes from a tenant's config; absent: plain fetch */
  readonly net?: NetPort | undefined;
}

export type QueryValue = string | number | boolean | undefined | null | readonly (string | number)[];

export interface HttpCall {
  readonly method?: string;
  /** appended to the base URL; an absolute URL (a `next` link) is used as is */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** a string or Uint8Array is sent as is; anything else as JSON */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

export interface HttpAnswer<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly data: T;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/** `Retry-After` in seconds or as an HTTP date; null when absent or unreadable. */
// wall clock: an HTTP-date Retry-After is the remote server's absolute time
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function excerpt(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

export class HttpClient {
  private readonly baseUrl: string;

  constructor(private readonly options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query: HttpCall['query'] = {}): URL {
    const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`));
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value as readonly (string | number)[]) url.searchParams.append(key, String(item));
      else url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** A JSON answer (an empty body reads as null). */
  async json<T>(call: HttpCall): Promise<HttpAnswer<T>> {
    const response = await this.send(call);
    const text = await response.text();
    let data: unknown = null;
    if (text.length > 0) {
      try {
        data = JSON.parse(text);
      } catch {
        throw new ToolError('upstream_error', `${this.options.system} answered ${response.status} with a body that is not JSON: ${excerpt(text)}`);
      }
    }
    return { status: response.status, headers: response.headers, data: data as T };
  }

  /** A text answer (logs, consoles). */
  async text(call: HttpCall): Promise<HttpAnswer<string>> {
    const response = await this.send(call);
    return { status: response.status, headers: response.headers, data: await response.text() };
  }

  /** Sends with retries; resolves with a 2xx/3xx response, throws a ToolError otherwise. */
  async send(call: HttpCall): Promise<Response> {
    const maxRetries = this.options.maxRetries ?? 3;
    const maxDelay = this.options.maxRetryDelayMs ?? 30_000;
    let delay = this.options.baseRetryDelayMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      call.signal.throwIfAborted();
      const response = await this.fetchOnce(call);
      if (response.ok || (response.status >= 300 && response.status < 400)) return response;
      if (RETRYABLE.has(response.status) && attempt < maxRetries) {
        const wait = retryAfterMs(response.headers) ?? delay * (1 + Math.random() * 0.25);
        if (wait <= maxDelay) {
          await response.body?.cancel();
          await sleep(wait, call.signal);
          delay *= 2;
          continue;
        }
      }
      throw await this.failure(response);
    }
  }

  private async fetchOnce(call: HttpCall): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...call.headers };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (call.body !== undefined) {
      if (typeof call.body === 'string') body = call.body;
      else if (call.body instanceof Uint8Array) body = new Uint8Array(call.body);
      else {
        body = JSON.stringify(call.body);
        headers['content-type'] ??= 'application/json';
      }
    }
    try {
      return await (this.options.net?.fetch ?? fetch)(this.url(call.path, call.query), {
        method: call.method ?? 'GET',
        headers,
        body,
        signal: call.signal,
        redirect: 'manual',
      });
    } catch (error) {
      call.signal.throwIfAborted();
      if (ToolError.is(error)) throw error; // the egress guard's refusal, `egress_refused`
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new ToolError('upstream_unreachable', `${this.options.system} at ${this.baseUrl} cannot be reached: ${cause}`);
    }
  }

  private async failure(response: Response): Promise<ToolError> {
    const text = excerpt(await response.text().catch(() => ''));
    const system = this.options.system;
    const details = { status: response.status, body: text };
    switch (response.status) {
      case 401:
        return new ToolError('unauthorized', `${system} refused the credentials (401)`, details);
      case 403:
        return new ToolError('forbidden', `${system} denied the request (403): the token lacks a permission or scope`, details);
      case 404:
        return new ToolError('not_found', `${system} has no such resource (404)`, details);
      case 429: {
        const wait = retryAfterMs(response.headers);
        return new ToolError('rate_limited_upstream', `${system} is rate limiting these requests; try again later`, {
          ...details,
          ...(wait === null ? {} : { retry_after_s: Math.ceil(wait / 1000) }),
        });
      }
      default:
        return new ToolError('upstream_error', `${system} answered ${response.status}`, details);
    }
  }
}
