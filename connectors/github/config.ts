/** The github source config: its JSON Schema and the typed view tools read. */
import type { JsonSchema } from '../contract.js';

const GITHUB_API_URL = 'https://api.github.com';

type GithubAuth =
  | { readonly kind: 'pat' | 'oauth'; readonly token: string }
  | { readonly kind: 'app'; readonly app_id: string; readonly private_key: string; readonly installation_id: string };

export interface GithubConfig {
  readonly auth: GithubAuth;
  /** organizations whose repositories the source covers */
  readonly orgs: readonly string[];
  /** single repositories (`owner/name`) the source covers */
  readonly repositories: readonly string[];
  /** the REST API root: `https://api.github.com` or GitHub Enterprise `https://HOST/api/v3` */
  readonly baseUrl: string;
}

/** Secret fields carry `writeOnly: true` (the sources resource masks them on read). */
export const GITHUB_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['auth'],
  properties: {
    auth: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: {
        kind: { enum: ['pat', 'oauth', 'app'], description: 'pat/oauth: a token; app: a GitHub App installation' },
        token: { type: 'string', minLength: 1, writeOnly: true, description: 'personal access token or OAuth token (pat, oauth)' },
        app_id: { type: ['string', 'integer'], description: 'the GitHub App id (app)' },
        private_key: { type: 'string', minLength: 1, writeOnly: true, description: "the App's PEM private key (app)" },
        installation_id: { type: ['string', 'integer'], description: "the App's installation id (app)" },
      },
      if: { properties: { kind: { const: 'app' } } },
      then: { required: ['app_id', 'private_key', 'installation_id'] },
      else: { required: ['token'] },
    },
    orgs: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'organizations whose repositories this source covers' },
    repositories: {
      type: 'array',
      items: { type: 'string', pattern: '^[^/\\s]+/[^/\\s]+$' },
      default: [],
      description: 'single repositories as owner/name',
    },
    base_url: {
      type: 'string',
      pattern: '^https?://',
      description: 'REST API root; default https://api.github.com, GitHub Enterprise: https://HOST/api/v3',
    },
  },
};

/** a string or an integer id as text; anything else reads as missing */
const scalar = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** The typed view of a config (already checked against the schema by the catalog; validate() gets it raw, so this is lenient). */
export function githubConfigOf(config: Readonly<Record<string, unknown>>): GithubConfig {
  const auth = (config['auth'] ?? {}) as Record<string, unknown>;
  const baseUrl = typeof config['base_url'] === 'string' ? config['base_url'].replace(/\/+$/, '') : GITHUB_API_URL;
  const common = { orgs: strings(config['orgs']), repositories: strings(config['repositories']), baseUrl };
  if (auth['kind'] === 'app') {
    return {
      ...common,
      auth: { kind: 'app', app_id: scalar(auth['app_id']), private_key: scalar(auth['private_key']), installation_id: scalar(auth['installation_id']) },
    };
  }
  return { ...common, auth: { kind: auth['kind'] === 'oauth' ? 'oauth' : 'pat', token: scalar(auth['token']) } };
}

/** `github.com` or the Enterprise host: qualifies graph keys so two GitHub instances never collide. */
export function githubHost(config: GithubConfig): string {
  const host = new URL(config.baseUrl).host;
  return host === 'api.github.com' ? 'github.com' : host;
}
