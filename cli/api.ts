/**
 * The client's only way to the server: JSON requests, streamed uploads and
 * downloads under `SERVICE_API_URL` with `Authorization: Bearer SERVICE_TOKEN`.
 * Transport failures and error answers become CliErrors with their exit code.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { CliError } from './errors.js';

export interface Environment {
  readonly apiUrl: string;
  readonly token: string;
  /** informational: shown by `status` */
  readonly pipelineId: string | null;
  /** names the run for `log`/`progress` when the token is a login token */
  readonly pipelineRunId: string | null;
}

/** Reads the environment; thrown (exit 3 / 4) when the URL or the token is missing. */
export function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const apiUrl = env['SERVICE_API_URL']?.trim();
  if (!apiUrl) {
    throw new CliError('missing_api_url', 'SERVICE_API_URL is not set: export the API root including /api/v1, e.g. http://localhost:8080/api/v1');
  }
  try {
    new URL(apiUrl);
  } catch {
    throw new CliError('missing_api_url', `SERVICE_API_URL is not a URL: "${apiUrl}"`);
  }
  const token = env['SERVICE_TOKEN']?.trim();
  if (!token) throw new CliError('missing_token', 'SERVICE_TOKEN is not set: export the pipeline token (or a login token)');
  return {
    apiUrl: apiUrl.replace(/\/+$/, ''),
    token,
    pipelineId: env['PIPELINE_ID']?.trim() || null,
    pipelineRunId: env['PIPELINE_RUN_ID']?.trim() || null,
  };
}

export type Query = Record<string, string | number | boolean | undefined>;

export class ApiClient {
  constructor(
    readonly env: Environment,
    private readonly trace: (line: string) => void,
  ) {}

  url(path: string, query: Query = {}): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
    const text = search.toString();
    return `${this.env.apiUrl}${path}${text === '' ? '' : `?${text}`}`;
  }

  async json<T = unknown>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    const response = await this.send(method, this.url(path, options.query), {
      headers: options.body === undefined ? {} : { 'content-type': 'application/json' },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return (await this.readJson(response)) as T;
  }

  /** PUTs a local file as a stream (never read whole into memory); `as` sends it otherwise (`POST` with its content type) */
  async upload<T = unknown>(
    path: string,
    query: Query,
    localFile: string,
    size: number,
    as: { readonly method: 'PUT' | 'POST'; readonly contentType: string } = { method: 'PUT', contentType: 'application/octet-stream' },
  ): Promise<T> {
    const body = Readable.toWeb(createReadStream(localFile)) as ReadableStream<Uint8Array>;
    const response = await this.send(as.method, this.url(path, query), {
      headers: { 'content-type': as.contentType, 'content-length': String(size) },
      body,
      duplex: 'half',
    });
    return (await this.readJson(response)) as T;
  }

  /** The response of a GET whose body the caller streams. */
  async download(path: string, query: Query): Promise<Response> {
    return this.send('GET', this.url(path, query), {});
  }

  /** A success answer's JSON body; a body that is not JSON means the URL points at another server. */
  private async readJson(response: Response): Promise<unknown> {
    const text = await response.text();
    if (text === '') return null;
    try {
      return JSON.parse(text);
    } catch {
      throw this.notThisService(response);
    }
  }

  /** exit 5 with a message that names what answered instead of a JavaScript parse error */
  private notThisService(response: Response): CliError {
    const type = response.headers.get('content-type') ?? 'no content type';
    return new CliError(
      'cannot_connect',
      `cannot connect to the service at ${this.env.apiUrl}: the server there answered HTTP ${response.status} (${type}), not this service's JSON API. Check SERVICE_API_URL (the API root, ending in /api/v1)`,
    );
  }

  private async send(method: string, url: string, init: RequestInit & { duplex?: 'half' }): Promise<Response> {
    this.trace(`> ${method} ${url}`);
    let response: Response;
    try {
      response = await fetch(url, { ...init, method, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.env.token}` } });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError('cannot_connect', `cannot connect to ${this.env.apiUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    this.trace(`< ${response.status} ${method} ${url}`);
    if (response.ok) return response;
    const text = await response.text();
    const envelope = errorEnvelope(text);
    // every error this service answers carries the envelope: without one, something else answered
    if (!envelope) throw this.notThisService(response);
    const { code, message } = envelope;
    if (response.status === 401) {
      throw new CliError('unauthorized', `401 Unauthorized (${code}): ${message}. The token is expired or invalid: get a new SERVICE_TOKEN`);
    }
    if (response.status === 404) throw new CliError('not_found', `not found (${code}): ${message}`);
    throw new CliError('api_error', `server answered ${response.status} ${code}: ${message}`);
  }
}

/** `{error:{code,message}}` from an error answer's text; null when the text is not that envelope */
function errorEnvelope(text: string): { code: string; message: string } | null {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } } | null;
    const error = parsed?.error;
    if (typeof error?.code === 'string' && typeof error.message === 'string') return { code: error.code, message: error.message };
  } catch {
    // not JSON: a proxy's or another server's page
  }
  return null;
}
