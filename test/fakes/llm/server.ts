/**
 * A fake LLM provider speaking BOTH real wire formats over node:http on 127.0.0.1,
 * so tests drive the official `openai` and `@anthropic-ai/sdk` clients end to end:
 *
 * - OpenAI chat completions: `POST /v1/chat/completions`, auth `authorization: Bearer <key>`.
 *   `stream: true` answers `text/event-stream` of `data: {chat.completion.chunk}` lines
 *   (tool call arguments split into several fragments, a usage chunk when
 *   `stream_options.include_usage` is set, then `data: [DONE]`); otherwise one
 *   `chat.completion` JSON object. Errors use `{error:{message,type,code}}`.
 * - Anthropic messages: `POST /v1/messages`, auth `x-api-key: <key>` plus `anthropic-version`
 *   (the documented header, which runtime/llm sends; a bare `@anthropic-ai/sdk` 1.x client
 *   sends its apiKey as `authorization: Bearer` instead, so give it `defaultHeaders: {'x-api-key': key}`).
 *   `stream: true` answers the named events message_start, content_block_start,
 *   content_block_delta (text_delta, input_json_delta in fragments), content_block_stop,
 *   message_delta (stop_reason, usage), message_stop; otherwise one `message` JSON object.
 *   Errors use `{type:'error', error:{type,message}}`.
 *
 * Usage from a test:
 *
 *   const llm = await startFakeLlmServer();            // key: FAKE_LLM_API_KEY unless given
 *   llm.script([
 *     { tool_calls: [{ name: 'search_connector_tools', arguments: { query: 'pr' } }] },
 *     { status: 500 },                                 // a failure turn (retried by the client)
 *     { text: ['Hel', 'lo'], usage: { input_tokens: 30, output_tokens: 2 } },
 *   ]);
 *   env LLM_BASE_URL (the operator's endpoint, with LLM_API_KEY = llm.apiKey), or settings
 *   llm_base_url + llm_api_key (an organization's own) = llm.baseUrl('openai')  // `${llm.url}/v1`; anthropic: llm.url
 *   ... run the code under test ...
 *   expect(llm.requests[1]?.body).toMatchObject({ ... }); // what the model was sent
 *   await llm.close();
 *
 * Each request that passes the auth check takes the next turn from the queue, whichever
 * endpoint it hits. An empty queue answers 500 with a body saying the script ran out.
 * A wrong or missing key answers 401 without consuming a turn; every request records the
 * key it presented (`api_key`) and all its headers, so tests can tell whose key arrived. Malformed conversations
 * (a tool result that answers no earlier tool call, a system role inside Anthropic
 * `messages`) answer 400 like the real APIs, without consuming a turn.
 *
 * Dropping the connection mid-answer: `{ text: ['a', 'b'], disconnect_after_chunks: 1 }`
 * streams 'a', then destroys the socket (0: right after the stream opens).
 *
 * Holding a turn: `{ text: ['a', 'b'], hold_after_chunks: 1 }` streams 'a', then waits
 * until `release()` (or until the client disconnects, which is recorded as
 * `request.disconnected`). `whenHeld()` resolves once a turn is parked there.
 * `release()` called before a turn reaches its hold point lets that turn pass through.
 */
import { handleEmbeddings } from '../embeddings/server.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FinishReason, Usage } from '../../../runtime/llm/types.js';

export const FAKE_LLM_API_KEY = 'fake-llm-key-0123456789';

export type FakeLlmProvider = 'openai' | 'anthropic';

export interface FakeToolCall {
  /** default: `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic) */
  readonly id?: string;
  readonly name: string;
  /** an object is serialized to JSON; a string is sent as is (to test malformed arguments) */
  readonly arguments: Record<string, unknown> | string;
}

export interface FakeReply {
  /** text chunks, streamed in order as separate deltas */
  readonly text?: string | readonly string[];
  readonly tool_calls?: readonly FakeToolCall[];
  /** default: `tool_use` when tool_calls are present, `end_turn` otherwise */
  readonly stop?: FinishReason;
  /** default: { input_tokens: 10, output_tokens: 20 } */
  readonly usage?: Usage;
  /** OpenAI only: send no usage chunk even when asked, like some compatible servers */
  readonly omit_usage?: boolean;
  /** pause between streamed chunks (keep it in the tens of milliseconds) */
  readonly chunk_delay_ms?: number;
  /** stream this many text chunks, then wait for release() (0: right after the stream opens) */
  readonly hold_after_chunks?: number;
  /** stream this many text chunks, then drop the connection (a network failure mid-answer) */
  readonly disconnect_after_chunks?: number;
}

export interface FakeFailure {
  /** HTTP status to answer, e.g. 429, 500, 401 */
  readonly status: number;
  /** seconds, sent as the `retry-after` header */
  readonly retry_after?: number;
  /** response body; default: the provider's own error envelope */
  readonly body?: unknown;
}

export type FakeTurn = FakeReply | FakeFailure;

export interface RecordedRequest {
  readonly provider: FakeLlmProvider;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** the key the client presented: the Bearer token (OpenAI) or `x-api-key` (Anthropic); null when none */
  readonly api_key: string | null;
  /** the parsed JSON body (null when it was not JSON) */
  readonly body: Record<string, unknown> | null;
  /** the HTTP status the fake answered */
  status: number;
  /** the client went away before the answer was complete */
  disconnected: boolean;
}

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** the API key the fake accepts */
  readonly apiKey: string;
  /** what to configure as `llm_base_url`: `${url}/v1` for openai, `url` for anthropic */
  baseUrl(provider: FakeLlmProvider): string;
  /** appends turns to the queue */
  script(turns: readonly FakeTurn[]): void;
  /** every request received, in order (including rejected ones) */
  readonly requests: readonly RecordedRequest[];
  /** turns not yet consumed */
  readonly remaining: number;
  /** lets the oldest held turn continue (or, when none is held, the next one that reaches its hold point) */
  release(): void;
  /** resolves once a turn is parked at its hold point */
  whenHeld(): Promise<void>;
  /** resolves once at least `count` requests have been received */
  whenRequests(count: number): Promise<void>;
  /** empties the queue, the recorded requests and pending releases */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeLlmOptions {
  /** @default FAKE_LLM_API_KEY */
  readonly apiKey?: string;
}

const DEFAULT_USAGE: Usage = { input_tokens: 10, output_tokens: 20 };

function isFailure(turn: FakeTurn): turn is FakeFailure {
  return 'status' in turn;
}

function chunksOf(text: FakeReply['text']): readonly string[] {
  if (text === undefined) return [];
  return typeof text === 'string' ? [text] : text;
}

/** Splits a JSON text into up to three fragments, the way providers stream arguments. */
function fragments(json: string): string[] {
  if (json.length < 3) return [json];
  const third = Math.ceil(json.length / 3);
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((part) => part !== '');
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const OPENAI_FINISH: Record<FinishReason, string> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  stop_sequence: 'stop',
};

const ANTHROPIC_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function errorBody(provider: FakeLlmProvider, status: number, message: string): unknown {
  if (provider === 'anthropic') {
    return { type: 'error', error: { type: ANTHROPIC_ERROR_TYPE[status] ?? 'api_error', message } };
  }
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : null } };
}

function presentedKey(provider: FakeLlmProvider, request: IncomingMessage): string | null {
  if (provider === 'anthropic') {
    const key = request.headers['x-api-key'];
    return typeof key === 'string' ? key : null;
  }
  const match = /^Bearer (.+)$/.exec(request.headers['authorization'] ?? '');
  return match?.[1] ?? null;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The 400s the real APIs answer for conversations that do not fit together. */
function conversationProblem(provider: FakeLlmProvider, body: Record<string, unknown>): string | null {
  if (typeof body['model'] !== 'string' || body['model'] === '') return 'model: field required';
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  if (provider === 'openai') {
    const open = new Set<string>();
    for (const [index, raw] of messages.entries()) {
      const message = record(raw);
      const role = message?.['role'];
      if (role === 'assistant') {
        for (const call of list(message?.['tool_calls'])) {
          const id = record(call)?.['id'];
          if (typeof id === 'string') open.add(id);
        }
      } else if (role === 'tool') {
        const id = message?.['tool_call_id'];
        if (typeof id !== 'string' || !open.has(id)) {
          return `messages[${index}]: a message with role 'tool' must answer a tool_call_id of a preceding assistant message`;
        }
      } else if (role !== 'system' && role !== 'user' && role !== 'developer') {
        return `messages[${index}].role: unknown role ${String(role)}`;
      }
    }
    return null;
  }
  if (typeof body['max_tokens'] !== 'number') return 'max_tokens: field required';
  let previousToolUses = new Set<string>();
  for (const [index, raw] of messages.entries()) {
    const message = record(raw);
    const role = message?.['role'];
    if (role !== 'user' && role !== 'assistant') {
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    }
    const blocks = list(message?.['content']).map(record);
    if (role === 'user') {
      for (const block of blocks) {
        if (block?.['type'] !== 'tool_result') continue;
        const id = block['tool_use_id'];
        if (typeof id !== 'string' || !previousToolUses.has(id)) {
          return `messages.${index}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
      previousToolUses = new Set();
    } else {
      previousToolUses = new Set(blocks.filter((block) => block?.['type'] === 'tool_use').map((block) => String(block?.['id'])));
    }
  }
  return null;
}

export async function startFakeLlmServer(options: FakeLlmOptions = {}): Promise<FakeLlmServer> {
  const apiKey = options.apiKey ?? FAKE_LLM_API_KEY;
  const queue: FakeTurn[] = [];
  const requests: RecordedRequest[] = [];
  let releaseCredits = 0;
  /** turns parked at their hold point, oldest first */
  const heldGates: (() => void)[] = [];
  let heldWaiters: (() => void)[] = [];
  let requestWaiters: { count: number; resolve: () => void }[] = [];
  let callCounter = 0;
  let messageCounter = 0;

  function notifyRequests(): void {
    requestWaiters = requestWaiters.filter((waiter) => {
      if (requests.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Parks the turn until release() or the client's disconnect. */
  async function hold(response: ServerResponse): Promise<void> {
    if (releaseCredits > 0) {
      releaseCredits -= 1;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        const at = heldGates.indexOf(done);
        if (at >= 0) heldGates.splice(at, 1);
        response.off('close', done);
        resolve();
      };
      heldGates.push(done);
      response.once('close', done);
      const waiters = heldWaiters;
      heldWaiters = [];
      for (const waiter of waiters) waiter();
    });
  }

  /**
   * Before text chunk `index` (and once after the last, index === count): hold or drop
   * the connection when the turn asks for it there. False: stop writing.
   */
  async function checkpoint(response: ServerResponse, reply: FakeReply, index: number, count: number): Promise<boolean> {
    const at = (option: number | undefined): boolean => option !== undefined && (option === index || (index === count && option > count));
    if (at(reply.hold_after_chunks)) await hold(response);
    if (at(reply.disconnect_after_chunks)) {
      // let what was written reach the client first, as a real dropped connection would
      await new Promise<void>((resolve) => response.write('', () => resolve()));
      response.destroy();
      return false;
    }
    return !response.destroyed;
  }

  function sendJson(response: ServerResponse, entry: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): void {
    entry.status = status;
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }

  /** Writes SSE frames with the turn's pacing; returns false once the client is gone. */
  function sseWriter(response: ServerResponse, entry: RecordedRequest, reply: FakeReply) {
    entry.status = 200;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    response.flushHeaders();
    return async (frame: string): Promise<boolean> => {
      if (response.destroyed || response.writableEnded) return false;
      response.write(frame);
      if (reply.chunk_delay_ms !== undefined && reply.chunk_delay_ms > 0) await sleep(reply.chunk_delay_ms);
      return !response.destroyed;
    };
  }

  async function openaiStream(response: ServerResponse, entry: RecordedRequest, body: Record<string, unknown>, reply: FakeReply): Promise<void> {
    const id = `chatcmpl-fake${++messageCounter}`;
    const model = String(body['model']);
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices, ...extra })}\n\n`;
    const delta = (value: Record<string, unknown>, finish: string | null = null): string =>
      chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }]);
    const write = sseWriter(response, entry, reply);
    const usage = reply.usage ?? DEFAULT_USAGE;
    const calls = reply.tool_calls ?? [];
    const stop = reply.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn');

    if (!(await write(delta({ role: 'assistant', content: '', refusal: null })))) return;
    const texts = chunksOf(reply.text);
    for (const [index, text] of texts.entries()) {
      if (!(await checkpoint(response, reply, index, texts.length))) return;
      if (!(await write(delta({ content: text })))) return;
    }
    if (!(await checkpoint(response, reply, texts.length, texts.length))) return;
    for (const [index, call] of calls.entries()) {
      const callId = call.id ?? `call_${++callCounter}`;
      const head = { index, id: callId, type: 'function', function: { name: call.name, arguments: '' } };
      if (!(await write(delta({ tool_calls: [head] })))) return;
      for (const part of fragments(argumentsText(call))) {
        if (!(await write(delta({ tool_calls: [{ index, function: { arguments: part } }] })))) return;
      }
    }
    if (!(await write(delta({}, OPENAI_FINISH[stop])))) return;
    const streamOptions = record(body['stream_options']);
    if (streamOptions?.['include_usage'] === true && reply.omit_usage !== true) {
      const wire = { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: usage.input_tokens + usage.output_tokens };
      if (!(await write(chunk([], { usage: wire })))) return;
    }
    if (!(await write('data: [DONE]\n\n'))) return;
    response.end();
  }

  async function anthropicStream(response: ServerResponse, entry: RecordedRequest, body: Record<string, unknown>, reply: FakeReply): Promise<void> {
    const write = sseWriter(response, entry, reply);
    const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const usage = reply.usage ?? DEFAULT_USAGE;
    const calls = reply.tool_calls ?? [];
    const stop = reply.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
    const message = {
      id: `msg_fake${++messageCounter}`,
      type: 'message',
      role: 'assistant',
      model: String(body['model']),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
    };
    if (!(await write(event('message_start', { message })))) return;
    if (!(await write(event('ping', {})))) return;
    let blockIndex = 0;
    const texts = chunksOf(reply.text);
    if (texts.length > 0 || reply.hold_after_chunks !== undefined || reply.disconnect_after_chunks !== undefined) {
      if (!(await write(event('content_block_start', { index: blockIndex, content_block: { type: 'text', text: '' } })))) return;
      for (const [index, text] of texts.entries()) {
        if (!(await checkpoint(response, reply, index, texts.length))) return;
        if (!(await write(event('content_block_delta', { index: blockIndex, delta: { type: 'text_delta', text } })))) return;
      }
      if (!(await checkpoint(response, reply, texts.length, texts.length))) return;
      if (!(await write(event('content_block_stop', { index: blockIndex })))) return;
      blockIndex += 1;
    }
    for (const call of calls) {
      const block = { type: 'tool_use', id: call.id ?? `toolu_${++callCounter}`, name: call.name, input: {} };
      if (!(await write(event('content_block_start', { index: blockIndex, content_block: block })))) return;
      for (const part of ['', ...fragments(argumentsText(call))]) {
        const delta = { type: 'input_json_delta', partial_json: part };
        if (!(await write(event('content_block_delta', { index: blockIndex, delta })))) return;
      }
      if (!(await write(event('content_block_stop', { index: blockIndex })))) return;
      blockIndex += 1;
    }
    const final = { stop_reason: stop, stop_sequence: null };
    if (!(await write(event('message_delta', { delta: final, usage: { output_tokens: usage.output_tokens } })))) return;
    if (!(await write(event('message_stop', {})))) return;
    response.end();
  }

  function openaiJson(body: Record<string, unknown>, reply: FakeReply): unknown {
    const usage = reply.usage ?? DEFAULT_USAGE;
    const calls = reply.tool_calls ?? [];
    const stop = reply.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
    const text = chunksOf(reply.text).join('');
    const toolCalls = calls.map((call) => ({
      id: call.id ?? `call_${++callCounter}`,
      type: 'function',
      function: { name: call.name, arguments: argumentsText(call) },
    }));
    return {
      id: `chatcmpl-fake${++messageCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: String(body['model']),
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text === '' ? null : text, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
          logprobs: null,
          finish_reason: OPENAI_FINISH[stop],
        },
      ],
      usage: { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: usage.input_tokens + usage.output_tokens },
    };
  }

  function anthropicJson(body: Record<string, unknown>, reply: FakeReply): unknown {
    const usage = reply.usage ?? DEFAULT_USAGE;
    const calls = reply.tool_calls ?? [];
    const text = chunksOf(reply.text).join('');
    const content: unknown[] = text === '' ? [] : [{ type: 'text', text }];
    for (const call of calls) {
      const input = typeof call.arguments === 'string' ? parseOr(call.arguments) : call.arguments;
      content.push({ type: 'tool_use', id: call.id ?? `toolu_${++callCounter}`, name: call.name, input });
    }
    return {
      id: `msg_fake${++messageCounter}`,
      type: 'message',
      role: 'assistant',
      model: String(body['model']),
      content,
      stop_reason: reply.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens },
    };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const part of request) chunks.push(part as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | null = null;
    try {
      body = record(JSON.parse(raw));
    } catch {
      body = null;
    }
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const provider: FakeLlmProvider | null = path === '/v1/chat/completions' ? 'openai' : path === '/v1/messages' ? 'anthropic' : null;
    const entry: RecordedRequest = {
      provider: provider ?? 'openai',
      method: request.method ?? '',
      path,
      headers: { ...request.headers },
      api_key: presentedKey(provider ?? 'openai', request),
      body,
      status: 0,
      disconnected: false,
    };
    requests.push(entry);
    response.once('close', () => {
      if (!response.writableFinished) entry.disconnected = true;
    });
    notifyRequests();

    if (path === '/v1/embeddings' && request.method === 'POST') {
      const answer = handleEmbeddings(body, request.headers.authorization, apiKey);
      sendJson(response, entry, answer.status, answer.body, answer.headers ?? {});
      return;
    }
    if (provider === null || request.method !== 'POST') {
      sendJson(response, entry, 404, errorBody('openai', 404, `fake LLM: no route for ${request.method} ${path}`));
      return;
    }
    const authorized = provider === 'openai' ? request.headers['authorization'] === `Bearer ${apiKey}` : request.headers['x-api-key'] === apiKey;
    if (!authorized) {
      const message = provider === 'openai' ? 'Incorrect API key provided.' : 'invalid x-api-key';
      sendJson(response, entry, 401, errorBody(provider, 401, message));
      return;
    }
    if (provider === 'anthropic' && typeof request.headers['anthropic-version'] !== 'string') {
      sendJson(response, entry, 400, errorBody(provider, 400, 'anthropic-version: header is required'));
      return;
    }
    if (body === null) {
      sendJson(response, entry, 400, errorBody(provider, 400, 'request body is not a JSON object'));
      return;
    }
    const problem = conversationProblem(provider, body);
    if (problem !== null) {
      sendJson(response, entry, 400, errorBody(provider, 400, problem));
      return;
    }
    const turn = queue.shift();
    if (turn === undefined) {
      const message = `fake LLM script ran out: no turn queued for request #${requests.length} (${provider} ${path}); call script([...]) with one turn per model call`;
      sendJson(response, entry, 500, errorBody(provider, 500, message));
      return;
    }
    if (isFailure(turn)) {
      const headers: Record<string, string> = turn.retry_after === undefined ? {} : { 'retry-after': String(turn.retry_after) };
      const message = `fake LLM scripted failure ${turn.status}`;
      sendJson(response, entry, turn.status, turn.body ?? errorBody(provider, turn.status, message), headers);
      return;
    }
    if (body['stream'] === true) {
      if (provider === 'openai') await openaiStream(response, entry, body, turn);
      else await anthropicStream(response, entry, body, turn);
      return;
    }
    if (turn.hold_after_chunks !== undefined) await hold(response);
    if (turn.chunk_delay_ms !== undefined) await sleep(turn.chunk_delay_ms);
    if (turn.disconnect_after_chunks !== undefined) response.destroy();
    if (response.destroyed) return;
    sendJson(response, entry, 200, provider === 'openai' ? openaiJson(body, turn) : anthropicJson(body, turn));
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `fake LLM crashed: ${String(error)}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiKey,
    baseUrl: (provider) => (provider === 'openai' ? `${url}/v1` : url),
    script(turns) {
      queue.push(...turns);
    },
    get requests() {
      return requests;
    },
    get remaining() {
      return queue.length;
    },
    release() {
      const oldest = heldGates[0];
      if (oldest !== undefined) oldest();
      else releaseCredits += 1;
    },
    whenHeld() {
      if (heldGates.length > 0) return Promise.resolve();
      return new Promise((resolve) => heldWaiters.push(resolve));
    },
    whenRequests(count) {
      return new Promise((resolve) => {
        requestWaiters.push({ count, resolve });
        notifyRequests();
      });
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      releaseCredits = 0;
    },
    async close() {
      for (const gate of [...heldGates]) gate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same function under the short name the brief uses: `start()`. */
export { startFakeLlmServer as start };
