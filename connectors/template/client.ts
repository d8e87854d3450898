/**
 * The one place that talks HTTP to the system (here: a notes API with
 * bearer tokens). Every upstream failure becomes a ToolError the model can
 * read; the run's signal is passed on so a cancelled run stops the request.
 */
import { ToolError, type NetPort } from './sdk.js';

export interface NotesConfig {
  readonly base_url: string;
  readonly token: string;
  readonly workspace: string;
}

/**
 * `via`: the run's signal and the service's egress guard (a ToolContext or SyncContext fits). Calls to a
 * URL from the source's config go through `net.fetch`, so they cannot reach the service's own network.
 */
export async function notesApi(config: NotesConfig, path: string, via: { readonly signal: AbortSignal; readonly net?: NetPort | undefined }, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
  const { signal } = via;
  signal.throwIfAborted();
  const response = await (via.net?.fetch ?? fetch)(`${config.base_url.replace(/\/$/, '')}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json', accept: 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal,
  });
  if (response.status === 401) throw new ToolError('unauthorized', 'the notes API refused the token; fix the source');
  if (response.status === 404) throw new ToolError('not_found', `${path} does not exist`);
  if (response.status === 429) throw new ToolError('rate_limited_upstream', 'the notes API is rate limiting; try again later', { retry_after: response.headers.get('retry-after') });
  if (!response.ok) throw new ToolError('upstream_error', `the notes API answered ${response.status}`, { status: response.status });
  return response.status === 204 ? null : response.json();
}
