/** Shared steps of the ingest suites: a pipeline with a token, NDJSON bodies, posting them. */
import type { ApiResponse, Session, TestServer } from '../helpers/server.js';

export interface PipelineWithToken {
  readonly pipelineId: string;
  readonly token: string;
  readonly tokenId: string;
  readonly signingSecret: string;
}

export async function createPipeline(server: TestServer, session: Session, body: Record<string, unknown> = {}): Promise<PipelineWithToken> {
  const created = await server.request('POST', '/context/pipelines', {
    token: session.token,
    body: { name: `p-${Math.random().toString(36).slice(2)}`, kind: 'webhook', target_table: 'context_events', ...body },
  });
  if (created.status !== 201) throw new Error(`pipeline create failed: ${created.status} ${created.text}`);
  const token = await server.request('POST', `/context/pipelines/${created.body.id}/tokens`, { token: session.token, body: {} });
  if (token.status !== 201) throw new Error(`token create failed: ${token.status} ${token.text}`);
  return { pipelineId: created.body.id, token: token.body.token, tokenId: token.body.id, signingSecret: token.body.signing_secret };
}

export const ndjson = (rows: readonly unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';

export function ingest(server: TestServer, token: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return server.request('POST', `/context/ingest/webhook/${token}`, {
    body,
    headers: { 'content-type': 'application/x-ndjson', ...headers },
  });
}

export async function rowsOf(server: TestServer, session: Session, table: string, realm = 'default', limit = 200): Promise<Record<string, unknown>[]> {
  const response = await server.request('GET', `/context/tables/${table}/rows?realm=${realm}&limit=${limit}`, { token: session.token });
  if (response.status !== 200) throw new Error(`rows failed: ${response.status} ${response.text}`);
  return response.body.items;
}

export async function columnsOf(server: TestServer, session: Session, table: string, realm = 'default'): Promise<string[]> {
  const response = await server.request('GET', `/context/tables?realm=${realm}`, { token: session.token });
  if (response.status !== 200) throw new Error(`tables failed: ${response.status} ${response.text}`);
  const found = (response.body.items as { name: string; columns: { name: string }[] }[]).find((item) => item.name === table);
  return found ? found.columns.map((column) => column.name) : [];
}
