/** The Grafana HTTP API through the shared client: bearer service-account token, retries of 429/5xx. */
import type { NetPort } from '../contract.js';
import { HttpClient } from '../shared/http-client.js';

interface GrafanaConfig {
  readonly base_url: string;
  readonly api_token: string;
}

export function grafanaClient(config: Readonly<Record<string, unknown>>, net: NetPort | undefined): HttpClient {
  const { base_url, api_token } = config as unknown as GrafanaConfig;
  return new HttpClient({ baseUrl: base_url, system: 'Grafana', headers: { authorization: `Bearer ${api_token}` }, net });
}

/** Grafana org roles, weakest first */
export const ROLES = ['None', 'Viewer', 'Editor', 'Admin'] as const;
