/** Shared by the chat and runtime suites: an SSE client over fetch and an organization wired to the fake LLM. */
import { startFakeLlmServer, type FakeLlmProvider, type FakeLlmServer } from '../fakes/llm/server.js';
import type { Session, TestServer } from '../helpers/server.js';

export interface SseEvent {
  readonly id: number;
  readonly event: string;
  readonly data: any;
}

export interface SseStream {
  readonly status: number;
  readonly headers: Headers;
  /** every event received so far */
  readonly events: SseEvent[];
  /** resolves with the first event (already received or future) that matches */
  waitFor(predicate: (event: SseEvent) => boolean): Promise<SseEvent>;
  /** resolves when the stream ended (never rejects: see `failure`) */
  readonly ended: Promise<void>;
  /** the error that cut the stream when the server went away mid-stream */
  readonly failure: unknown;
  /** the client goes away */
  close(): void;
  /** the JSON body when the answer was not a stream */
  readonly json: any;
}

function parseFrame(frame: string): SseEvent | null {
  let id = NaN;
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('id: ')) id = Number(line.slice(4));
    else if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length === 0) return null;
  return { id, event, data: JSON.parse(data.join('\n')) };
}

export async function openStream(
  baseUrl: string,
  method: string,
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<SseStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  let waiters: { predicate: (event: SseEvent) => boolean; resolve: (event: SseEvent) => void }[] = [];
  const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const json = isStream ? undefined : await response.json().catch(() => undefined);
  let failure: unknown = null;
  const ended = (async () => {
    if (!isStream || !response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const event = parseFrame(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
          if (event === null) continue;
          events.push(event);
          waiters = waiters.filter((waiter) => {
            if (!waiter.predicate(event)) return true;
            waiter.resolve(event);
            return false;
          });
        }
      }
    } catch (error) {
      // a client abort is expected; a server that died mid-stream (kill -9) is recorded for the test to check
      if (!controller.signal.aborted) failure = error;
    }
  })();
  const stream: SseStream = {
    get failure() {
      return failure;
    },
    status: response.status,
    headers: response.headers,
    events,
    json,
    ended,
    close: () => controller.abort(),
    waitFor: (predicate) => {
      const found = events.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
  return stream;
}

/** Event names in order, e.g. ['message_start', 'content_delta', 'message_end']. */
export const names = (events: readonly SseEvent[]): string[] => events.map((event) => event.event);

/** the reply's text as a reader of the stream saw it: every `content_delta`, in order */
export const streamedText = (events: readonly SseEvent[]): string =>
  events
    .filter((event) => event.event === 'content_delta')
    .map((event) => String(event.data.delta))
    .join('');

export interface ChatOrg {
  readonly session: Session;
  readonly conversationId: string;
}

/** Points the organization at the fake LLM as its own endpoint (PATCH /settings: llm_base_url with its llm_api_key) and opens a conversation. */
export async function wireOrganization(
  server: TestServer,
  llm: FakeLlmServer,
  options: { provider?: FakeLlmProvider; model?: string; approvalTimeoutSecs?: number; approvalWrite?: 'allow' | 'ask' } = {},
): Promise<ChatOrg> {
  const session = await server.register();
  const provider = options.provider ?? 'openai';
  const settings = await server.request('PATCH', '/settings', {
    token: session.token,
    body: {
      llm_provider: provider,
      llm_model: options.model ?? (provider === 'openai' ? 'gpt-4o-mini' : 'claude-haiku-4-5'),
      llm_base_url: llm.baseUrl(provider),
      llm_api_key: llm.apiKey,
      ...(options.approvalTimeoutSecs === undefined ? {} : { approval_timeout_secs: options.approvalTimeoutSecs }),
    },
  });
  if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);
  const conversation = await server.request('POST', '/chat/conversations', {
    token: session.token,
    body: { title: 'test', ...(options.approvalWrite ? { approval_defaults: { write: options.approvalWrite } } : {}) },
  });
  if (conversation.status !== 201) throw new Error(`conversation: ${conversation.status} ${conversation.text}`);
  return { session, conversationId: conversation.body.id as string };
}

export const send = (server: TestServer, org: ChatOrg, content: string, conversationId = org.conversationId): Promise<SseStream> =>
  openStream(server.url, 'POST', `/chat/conversations/${conversationId}/messages`, { token: org.session.token, body: { content } });

/** A scripted model turn's call of `execute_connector_tool` for `tool` with `args`. */
export const execute = (tool: string, args: Record<string, unknown>) => ({ name: 'execute_connector_tool', arguments: { tool, arguments: args } });

export { startFakeLlmServer };

/** Answers a pending approval of the org's conversation. */
export const decide = (server: TestServer, org: ChatOrg, approvalId: string, approved = true) =>
  server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, { token: org.session.token, body: { approved } });
