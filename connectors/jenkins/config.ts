/** The jenkins source config: its JSON Schema, the typed view, the HTTP client, job paths. */
import type { JsonSchema, NetPort } from '../contract.js';
import { HttpClient } from '../shared/http-client.js';

export interface JenkinsConfig {
  /** the Jenkins root as users know it, e.g. https://ci.example.com/ (names the instance in graph keys) */
  readonly url: string;
  readonly username: string;
  readonly apiToken: string;
  /** where requests go: `base_url` (a proxy) or `url` */
  readonly baseUrl: string;
}

/** Secret fields carry `writeOnly: true` (the sources resource masks them on read). */
export const JENKINS_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'username', 'api_token'],
  properties: {
    url: { type: 'string', pattern: '^https?://', description: 'the Jenkins root URL, e.g. https://ci.example.com/' },
    username: { type: 'string', minLength: 1, description: 'the Jenkins user the API token belongs to' },
    api_token: {
      type: 'string',
      minLength: 1,
      writeOnly: true,
      description: 'an API token (user menu > Security > API Token); needs Overall/Read, Job/Build to trigger',
    },
    base_url: { type: 'string', pattern: '^https?://', description: 'send requests here instead of `url` (a proxy in front of Jenkins)' },
  },
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function jenkinsConfigOf(config: Readonly<Record<string, unknown>>): JenkinsConfig {
  const url = text(config['url']).replace(/\/+$/, '');
  const base = text(config['base_url']).replace(/\/+$/, '');
  return { url, username: text(config['username']), apiToken: text(config['api_token']), baseUrl: base || url };
}

export function jenkinsClient(config: JenkinsConfig, net: NetPort | undefined): HttpClient {
  const basic = Buffer.from(`${config.username}:${config.apiToken}`).toString('base64');
  return new HttpClient({ baseUrl: config.baseUrl, system: 'Jenkins', headers: { authorization: `Basic ${basic}` }, net });
}

/** `team/api/deploy` -> `/job/team/job/api/job/deploy` (folders nest as `job/<name>`). */
export function jobPath(fullName: string): string {
  return fullName
    .split('/')
    .filter(Boolean)
    .map((segment) => `/job/${encodeURIComponent(segment)}`)
    .join('');
}

/** The host (and path) of the Jenkins root: qualifies graph keys so two Jenkins never collide. */
export function jenkinsInstance(config: JenkinsConfig): string {
  const url = new URL(config.url);
  return (url.host + url.pathname).replace(/\/+$/, '');
}

export const JOB_ARG: JsonSchema = {
  type: 'string',
  minLength: 1,
  pattern: '^[^/]+(/[^/]+)*$',
  description: 'the job full name, folders separated by "/", e.g. team/api/deploy',
};

/** a build: its number, or a permalink Jenkins resolves */
export const BUILD_ARG: JsonSchema = {
  oneOf: [{ type: 'integer', minimum: 1 }, { enum: ['lastBuild', 'lastFailedBuild', 'lastSuccessfulBuild', 'lastStableBuild', 'lastCompletedBuild'] }],
  default: 'lastBuild',
  description: 'a build number or a permalink (lastBuild, lastFailedBuild, lastSuccessfulBuild, lastStableBuild, lastCompletedBuild)',
};
