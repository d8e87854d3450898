/** The vercel source config: its JSON Schema, the typed view, the HTTP client, Vercel's error bodies. */
import { ToolError, type JsonSchema, type NetPort } from '../contract.js';
import { HttpClient, type QueryValue } from '../shared/http-client.js';

const VERCEL_API_URL = 'https://api.vercel.com';

export interface VercelConfig {
  readonly token: string;
  /** the team the source works in (`team_...`); absent: the token's personal account */
  readonly teamId: string | null;
  readonly baseUrl: string;
}

/** Secret fields carry `writeOnly: true` (the sources resource masks them on read). */
export const VERCEL_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: {
    token: { type: 'string', minLength: 1, writeOnly: true, description: 'a Vercel access token (Account Settings > Tokens), scoped to the team' },
    team_id: { type: 'string', minLength: 1, description: 'the team id (team_...); omit for a personal account' },
    base_url: { type: 'string', pattern: '^https?://', description: 'API root; default https://api.vercel.com (a proxy otherwise)' },
  },
};

export function vercelConfigOf(config: Readonly<Record<string, unknown>>): VercelConfig {
  const base = typeof config['base_url'] === 'string' ? config['base_url'] : VERCEL_API_URL;
  return {
    token: typeof config['token'] === 'string' ? config['token'] : '',
    teamId: typeof config['team_id'] === 'string' && config['team_id'] !== '' ? config['team_id'] : null,
    baseUrl: base.replace(/\/+$/, ''),
  };
}

/** Vercel's API: Bearer token, and every call names the team (`teamId`) when the source has one. */
export class VercelApi {
  private readonly client: HttpClient;

  constructor(
    readonly config: VercelConfig,
    net: NetPort | undefined,
  ) {
    this.client = new HttpClient({ baseUrl: config.baseUrl, system: 'Vercel', headers: { authorization: `Bearer ${config.token}` }, net });
  }

  private query(query: Readonly<Record<string, QueryValue>> = {}): Record<string, QueryValue> {
    return { ...query, ...(this.config.teamId === null ? {} : { teamId: this.config.teamId }) };
  }

  async get<T>(path: string, signal: AbortSignal, query?: Readonly<Record<string, QueryValue>>): Promise<T> {
    try {
      return (await this.client.json<T>({ path, query: this.query(query), signal })).data;
    } catch (error) {
      throw vercelFailure(error);
    }
  }

  async post<T>(path: string, signal: AbortSignal, body: unknown, query?: Readonly<Record<string, QueryValue>>): Promise<T> {
    try {
      return (await this.client.json<T>({ method: 'POST', path, query: this.query(query), body, signal })).data;
    } catch (error) {
      throw vercelFailure(error);
    }
  }
}

/**
 * Vercel answers `{ error: { code, message, invalidToken? } }` (403, not 401,
 * for a bad token): its message and code reach the model.
 */
function vercelFailure(error: unknown): unknown {
  if (!ToolError.is(error) || typeof error.details?.['body'] !== 'string') return error;
  let body: { error?: { code?: string; message?: string; invalidToken?: boolean; missingToken?: boolean } };
  try {
    body = JSON.parse(error.details['body']) as typeof body;
  } catch {
    return error;
  }
  const upstream = body.error;
  if (!upstream) return error;
  const details = { status: error.details['status'], vercel_code: upstream.code ?? null, message: upstream.message ?? null };
  if (upstream.invalidToken === true || upstream.missingToken === true) {
    return new ToolError('unauthorized', `Vercel refused the token: ${upstream.message ?? 'not authorized'}`, details);
  }
  return new ToolError(error.code, `${error.message}: ${upstream.message ?? ''}`.replace(/: $/, ''), { ...error.details, ...details });
}

/** Epoch milliseconds as ISO 8601 (null stays null). */
export const isoOf = (millis: number | null | undefined): string | null => (typeof millis === 'number' ? new Date(millis).toISOString() : null);
