/**
 * The one place that talks HTTP to the system (here: a notes API with
 * bearer tokens). Every upstream failure becomes a ToolError the model can
 * read; the run's signal is passed on so a cancelled run stops the request.
 */
import { ToolError } from './sdk.js';

export interface NotesConfig {
  readonly base_url: string;
  readonly token: string;
  readonly workspace: string;
}

export async function notesApi(config: NotesConfig, path: string, signal: AbortSignal, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
  signal.throwIfAborted();
  const response = await fetch(`${config.base_url.replace(/\/$/, '')}${path}`, {
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
