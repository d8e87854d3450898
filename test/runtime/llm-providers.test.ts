/**
 * The LLM adapters through the official `openai` and `@anthropic-ai/sdk` clients
 * against the fake provider (test/fakes/llm/server.ts), which speaks both real
 * wire formats. Retries sleep through an injected function that only records
 * the waits, so nothing here really waits.
 */
import { createServer } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import {
  createLlmProvider,
  costUsd,
  priceOf,
  FALLBACK_PRICE,
  LlmError,
  type ChatMessage,
  type LlmEvent,
  type LlmProvider,
  type ToolDefinition,
} from '../../runtime/llm/index.js';
import { startFakeLlmServer, type FakeLlmProvider, type FakeLlmServer } from '../fakes/llm/server.js';

const MODELS: Record<FakeLlmProvider, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'search_connector_tools',
    description: 'Search the tool catalog',
    input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
];

let llm: FakeLlmServer;
let waits: number[] = [];

beforeAll(async () => {
  llm = await startFakeLlmServer();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.reset();
  waits = [];
});

function provider(name: FakeLlmProvider, overrides: { baseUrl?: string; apiKey?: string } = {}): LlmProvider {
  return createLlmProvider(
    { llm_provider: name, llm_model: MODELS[name] },
    { baseUrl: overrides.baseUrl ?? llm.baseUrl(name), apiKey: overrides.apiKey ?? llm.apiKey, owner: 'operator' },
    {
      retry: {
        random: () => 0.5,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      },
    },
  ).provider;
}

async function collect(stream: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const events: LlmEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(run: () => Promise<unknown>): Promise<LlmError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error('expected an LlmError, the call succeeded');
}

function ask(name: FakeLlmProvider, messages: readonly ChatMessage[], signal?: AbortSignal): AsyncIterable<LlmEvent> {
  return provider(name).stream({ model: MODELS[name], messages, tools: TOOLS, ...(signal ? { signal } : {}) });
}

const HELLO: readonly ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello' },
];

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(['openai', 'anthropic'] as const)('%s adapter', (name) => {
  it('streams text deltas in order, then the finish reason and usage', async () => {
    llm.script([{ text: ['Hel', 'lo', ', world'], usage: { input_tokens: 42, output_tokens: 3 } }]);
    const events = await collect(ask(name, HELLO));
    expect(events).toEqual([
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'text_delta', text: ', world' },
      { type: 'done', finish_reason: 'end_turn', usage: { input_tokens: 42, output_tokens: 3 } },
    ]);
    expect(llm.requests).toHaveLength(1);
    const request = llm.requests[0];
    if (name === 'openai') {
      expect(request?.path).toBe('/v1/chat/completions');
      expect(request?.headers['authorization']).toBe(`Bearer ${llm.apiKey}`);
      expect(request?.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Say hello' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'search_connector_tools', description: 'Search the tool catalog', parameters: TOOLS[0]?.input_schema },
          },
        ],
        max_completion_tokens: 4096,
        stream: true,
        stream_options: { include_usage: true },
      });
    } else {
      expect(request?.path).toBe('/v1/messages');
      expect(request?.headers['x-api-key']).toBe(llm.apiKey);
      expect(request?.headers['authorization']).toBeUndefined();
      expect(request?.body).toEqual({
        model: 'claude-haiku-4-5',
        max_tokens: 4096,
        system: 'You are terse.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
        tools: [{ name: 'search_connector_tools', description: 'Search the tool catalog', input_schema: TOOLS[0]?.input_schema }],
        stream: true,
      });
    }
  });

  it('assembles tool call arguments streamed in fragments, one event per call', async () => {
    const first = { query: 'open pull requests', limit: 5, nested: { flags: [true, null, 'ü "quoted"'] } };
    const second = { tool: 'memory.recall', args: { query: 'deploys' } };
    llm.script([
      {
        text: ['Let me look.'],
        tool_calls: [
          { id: 'call-one', name: 'search_connector_tools', arguments: first },
          { id: 'call-two', name: 'execute_connector_tool', arguments: second },
        ],
        usage: { input_tokens: 7, output_tokens: 11 },
      },
    ]);
    const events = await collect(ask(name, HELLO));
    expect(events).toEqual([
      { type: 'text_delta', text: 'Let me look.' },
      { type: 'tool_call', call: { id: 'call-one', name: 'search_connector_tools', arguments: first } },
      { type: 'tool_call', call: { id: 'call-two', name: 'execute_connector_tool', arguments: second } },
      { type: 'done', finish_reason: 'tool_use', usage: { input_tokens: 7, output_tokens: 11 } },
    ]);
  });

  it('reports arguments that are not a JSON object as invalid_arguments', async () => {
    llm.script([{ tool_calls: [{ id: 'bad-1', name: 'search_connector_tools', arguments: '{"query": "unterminated' }] }]);
    const events = await collect(ask(name, HELLO));
    expect(events[0]).toEqual({
      type: 'tool_call',
      call: { id: 'bad-1', name: 'search_connector_tools', arguments: {}, invalid_arguments: '{"query": "unterminated' },
    });
  });

  it('sends tool calls and their results back in the provider format on the next turn', async () => {
    llm.script([
      {
        tool_calls: [
          { id: 'tc-1', name: 'search_connector_tools', arguments: { query: 'pr' } },
          { id: 'tc-2', name: 'search_connector_tools', arguments: { query: 'build' } },
        ],
      },
      { text: ['Found nothing.'] },
    ]);
    const question: ChatMessage[] = [...HELLO];
    const firstTurn = await collect(ask(name, question));
    const calls = firstTurn.flatMap((event) => (event.type === 'tool_call' ? [event.call] : []));
    const conversation: ChatMessage[] = [
      ...question,
      { role: 'assistant', content: '', tool_calls: calls },
      { role: 'tool', tool_call_id: 'tc-1', name: 'search_connector_tools', content: '{"results":[]}' },
      { role: 'tool', tool_call_id: 'tc-2', name: 'search_connector_tools', content: '{"error":{"code":"not_found"}}' },
    ];
    const secondTurn = await collect(ask(name, conversation));
    expect(secondTurn[0]).toEqual({ type: 'text_delta', text: 'Found nothing.' });
    expect(llm.requests.map((request) => request.status)).toEqual([200, 200]);
    const body = llm.requests[1]?.body;
    if (name === 'openai') {
      expect(body?.['messages']).toEqual([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'tc-1', type: 'function', function: { name: 'search_connector_tools', arguments: '{"query":"pr"}' } },
            { id: 'tc-2', type: 'function', function: { name: 'search_connector_tools', arguments: '{"query":"build"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tc-1', content: '{"results":[]}' },
        { role: 'tool', tool_call_id: 'tc-2', content: '{"error":{"code":"not_found"}}' },
      ]);
    } else {
      expect(body?.['system']).toBe('You are terse.');
      expect(body?.['messages']).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'tc-1', name: 'search_connector_tools', input: { query: 'pr' } },
            { type: 'tool_use', id: 'tc-2', name: 'search_connector_tools', input: { query: 'build' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'tc-1', content: '{"results":[]}' },
            { type: 'tool_result', tool_use_id: 'tc-2', content: '{"error":{"code":"not_found"}}' },
          ],
        },
      ]);
    }
  });

  it('retries a 429 after the retry-after the provider sent, then streams', async () => {
    llm.script([{ status: 429, retry_after: 2 }, { text: ['ok'] }]);
    const events = await collect(ask(name, HELLO));
    expect(events[0]).toEqual({ type: 'text_delta', text: 'ok' });
    expect(waits).toEqual([2000]);
    expect(llm.requests.map((request) => request.status)).toEqual([429, 200]);
  });

  it('retries 500 twice with exponential backoff, then streams', async () => {
    llm.script([{ status: 500 }, { status: 500 }, { text: ['recovered'] }]);
    const events = await collect(ask(name, HELLO));
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'done']);
    // random() = 0.5: half of 500 ms plus a quarter, then the same of 1000 ms
    expect(waits).toEqual([375, 750]);
    expect(llm.requests.map((request) => request.status)).toEqual([500, 500, 200]);
  });

  it('gives up on 500 after the retry budget with llm_provider_error and the status', async () => {
    llm.script([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, { text: ['never'] }]);
    const error = await failure(() => collect(ask(name, HELLO)));
    expect(error.code).toBe('llm_provider_error');
    expect(error.status).toBe(500);
    expect(error.message).toBe(`${name} answered 500: fake LLM scripted failure 500 (after 4 attempts)`);
    expect(llm.requests).toHaveLength(4);
    expect(waits).toEqual([375, 750, 1500]);
    expect(llm.remaining).toBe(1);
  });

  it('gives up on 429 with llm_rate_limited when retry-after exceeds what we wait', async () => {
    llm.script([{ status: 429, retry_after: 3600 }, { text: ['never'] }]);
    const error = await failure(() => collect(ask(name, HELLO)));
    expect(error.code).toBe('llm_rate_limited');
    expect(error.status).toBe(429);
    expect(error.message).toContain('asked to retry after 3600000 ms');
    expect(llm.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('does not retry a 401 (wrong key) and says to check LLM_API_KEY', async () => {
    llm.script([{ text: ['never'] }]);
    const error = await failure(() => collect(provider(name, { apiKey: 'wrong-key' }).stream({ model: MODELS[name], messages: HELLO, tools: [] })));
    expect(error.code).toBe('llm_provider_error');
    expect(error.status).toBe(401);
    expect(error.message).toContain('(check LLM_API_KEY)');
    expect(error.message).not.toContain('wrong-key');
    expect(llm.requests.map((request) => request.status)).toEqual([401]);
    expect(waits).toEqual([]);
    expect(llm.remaining).toBe(1);
  });

  it('answers llm_unreachable when nothing listens at the base URL, after retrying', async () => {
    const port = await closedPort();
    const baseUrl = name === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
    const error = await failure(() => collect(provider(name, { baseUrl }).stream({ model: MODELS[name], messages: HELLO, tools: [] })));
    expect(error.code).toBe('llm_unreachable');
    expect(error.status).toBeUndefined();
    expect(error.message).toContain(`could not reach ${name} at ${baseUrl}`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(waits).toHaveLength(3);
  });

  it('stops with llm_aborted when the signal aborts mid-stream, and closes the connection', async () => {
    llm.script([{ text: ['first', 'second'], hold_after_chunks: 1 }]);
    const controller = new AbortController();
    const iterator = ask(name, HELLO, controller.signal)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text_delta', text: 'first' } });
    await llm.whenHeld();
    controller.abort();
    const error = await failure(() => iterator.next());
    expect(error.code).toBe('llm_aborted');
    await vi.waitFor(() => expect(llm.requests[0]?.disconnected).toBe(true));
  });

  it('stops with llm_aborted before any request when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(() => collect(ask(name, HELLO, controller.signal)));
    expect(error.code).toBe('llm_aborted');
    expect(llm.requests).toHaveLength(0);
  });

  it('stops retrying with llm_aborted when the signal aborts during a backoff wait', async () => {
    llm.script([{ status: 503 }, { text: ['never'] }]);
    const controller = new AbortController();
    const { provider: aborting } = createLlmProvider(
      { llm_provider: name, llm_model: MODELS[name] },
      { baseUrl: llm.baseUrl(name), apiKey: llm.apiKey, owner: 'operator' },
      {
        retry: {
          sleep: () => {
            controller.abort();
            return Promise.resolve();
          },
        },
      },
    );
    const error = await failure(() => collect(aborting.stream({ model: MODELS[name], messages: HELLO, tools: [], signal: controller.signal })));
    expect(error.code).toBe('llm_aborted');
    expect(llm.requests).toHaveLength(1);
    expect(llm.remaining).toBe(1);
  });

  it('closes the connection when the consumer stops reading', async () => {
    llm.script([{ text: ['first', 'second'], hold_after_chunks: 1 }]);
    for await (const event of ask(name, HELLO)) {
      expect(event).toEqual({ type: 'text_delta', text: 'first' });
      break;
    }
    await vi.waitFor(() => expect(llm.requests[0]?.disconnected).toBe(true));
  });

  it('tells onRetry about each wait', async () => {
    llm.script([{ status: 502 }, { text: ['ok'] }]);
    const retries: unknown[] = [];
    const { provider: observed } = createLlmProvider(
      { llm_provider: name, llm_model: MODELS[name] },
      { baseUrl: llm.baseUrl(name), apiKey: llm.apiKey, owner: 'operator' },
      { retry: { random: () => 0, sleep: () => Promise.resolve(), onRetry: (retry) => retries.push({ ...retry, error: retry.error.code }) } },
    );
    await collect(observed.stream({ model: MODELS[name], messages: HELLO, tools: [] }));
    expect(retries).toEqual([{ attempt: 1, delayMs: 250, error: 'llm_provider_error' }]);
  });

  it('never retries once output has streamed: a dropped connection mid-answer fails the turn', async () => {
    llm.script([{ text: ['partial', 'rest'], disconnect_after_chunks: 1 }, { text: ['duplicate'] }]);
    const events: LlmEvent[] = [];
    const error = await failure(async () => {
      for await (const event of ask(name, HELLO)) events.push(event);
    });
    expect(events).toEqual([{ type: 'text_delta', text: 'partial' }]);
    expect(error.code).toBe('llm_unreachable');
    expect(error.message).toContain('failed: terminated');
    expect(llm.requests).toHaveLength(1);
    expect(llm.remaining).toBe(1);
  });

  it('retries a connection dropped before any output', async () => {
    llm.script([{ text: ['lost'], disconnect_after_chunks: 0 }, { text: ['again'] }]);
    const events = await collect(ask(name, HELLO));
    expect(events[0]).toEqual({ type: 'text_delta', text: 'again' });
    expect(llm.requests).toHaveLength(2);
    expect(waits).toEqual([375]);
  });

  it('surfaces the fake running out of script as a clear provider error', async () => {
    const error = await failure(() => collect(ask(name, HELLO)));
    expect(error.code).toBe('llm_provider_error');
    expect(error.message).toContain('fake LLM script ran out');
  });
});

describe('openai adapter against servers without stream usage', () => {
  it('estimates usage at about 4 characters a token so cost caps still count', async () => {
    llm.script([{ text: ['abcdefgh', 'ij'], omit_usage: true }]);
    const events = await collect(ask('openai', HELLO));
    const done = events.at(-1);
    const inputChars = JSON.stringify(HELLO).length + JSON.stringify(TOOLS).length;
    expect(done).toEqual({ type: 'done', finish_reason: 'end_turn', usage: { input_tokens: Math.ceil(inputChars / 4), output_tokens: 3 } });
  });
});

describe('fake LLM server', () => {
  it('answers non-streaming OpenAI chat completions', async () => {
    llm.script([{ text: ['Hi'], tool_calls: [{ id: 'c1', name: 'search_connector_tools', arguments: { query: 'x' } }] }]);
    const client = new OpenAI({ apiKey: llm.apiKey, baseURL: llm.baseUrl('openai'), maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hi');
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: 'search_connector_tools', arguments: '{"query":"x"}' } },
    ]);
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers non-streaming Anthropic messages', async () => {
    llm.script([{ text: ['Hi'], usage: { input_tokens: 3, output_tokens: 4 } }]);
    const client = new Anthropic({ apiKey: llm.apiKey, baseURL: llm.baseUrl('anthropic'), maxRetries: 0, defaultHeaders: { 'x-api-key': llm.apiKey } });
    const message = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'Hi' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toEqual({ input_tokens: 3, output_tokens: 4 });
  });

  it('rejects a tool result that answers no tool call with 400, like the real API', async () => {
    llm.script([{ text: ['never'] }]);
    const error = await failure(() =>
      collect(
        ask('anthropic', [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'nope', name: 'x', content: '{}' },
        ]),
      ),
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain('Each `tool_result` block must have a corresponding `tool_use` block');
    expect(llm.remaining).toBe(1);
  });
});

describe('createLlmProvider', () => {
  const operator = (apiKey: string | null) => ({ baseUrl: null, apiKey, owner: 'operator' as const });
  it.each([
    [{ llm_provider: null, llm_model: 'gpt-4o' }, operator('key'), 'no LLM is configured: missing llm_provider (settings)'],
    [{ llm_provider: 'openai', llm_model: ' ' }, operator('key'), 'no LLM is configured: missing llm_model (settings)'],
    [{ llm_provider: 'anthropic', llm_model: 'claude-sonnet-4-5' }, operator(null), 'no LLM is configured: missing LLM_API_KEY (environment)'],
    [
      { llm_provider: null, llm_model: null },
      operator(null),
      'no LLM is configured: missing llm_provider (settings), llm_model (settings), LLM_API_KEY (environment)',
    ],
    [
      { llm_provider: 'openai', llm_model: 'gpt-4o' },
      { baseUrl: 'http://127.0.0.1:1/v1', apiKey: null, owner: 'organization' as const },
      'no LLM is configured: missing llm_api_key (settings)',
    ],
    [{ llm_provider: 'mistral', llm_model: 'large' }, operator('key'), 'llm_provider "mistral" is not supported: use openai or anthropic'],
  ])('answers llm_unconfigured naming what is missing (%#)', (settings, endpoint, message) => {
    let thrown: unknown = null;
    try {
      createLlmProvider(settings, endpoint);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LlmError);
    expect(thrown).toMatchObject({ code: 'llm_unconfigured', message });
  });

  it('returns the provider named in settings and the model', () => {
    const { provider: openai, model } = createLlmProvider({ llm_provider: 'openai', llm_model: ' gpt-4o ' }, operator('k'));
    expect([openai.name, model]).toEqual(['openai', 'gpt-4o']);
    expect(createLlmProvider({ llm_provider: 'anthropic', llm_model: 'claude-opus-4-5' }, operator('k')).provider.name).toBe('anthropic');
  });

  it("names the organization's key, not LLM_API_KEY, when an organization endpoint refuses its key", async () => {
    llm.script([{ text: ['never'] }]);
    const { provider: tenant } = createLlmProvider(
      { llm_provider: 'openai', llm_model: MODELS.openai },
      { baseUrl: llm.baseUrl('openai'), apiKey: 'wrong-org-key', owner: 'organization' },
    );
    const error = await failure(() => collect(tenant.stream({ model: MODELS.openai, messages: HELLO, tools: [] })));
    expect(error.status).toBe(401);
    expect(error.message).toContain("(check the organization's llm_api_key in /settings)");
    expect(error.message).not.toContain('LLM_API_KEY');
  });
});

describe('prices', () => {
  it('prices known models, dated snapshots and router prefixes from the table', () => {
    expect(costUsd('gpt-4o', { input_tokens: 1_000_000, output_tokens: 1_000_000 })).toBe(12.5);
    expect(priceOf('gpt-4o-2024-08-06')).toEqual({ input_per_mtok: 2.5, output_per_mtok: 10 });
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input_per_mtok: 0.15, output_per_mtok: 0.6 });
    expect(priceOf('claude-sonnet-4-5-20250929')).toEqual({ input_per_mtok: 3, output_per_mtok: 15 });
    expect(priceOf('anthropic/claude-haiku-4-5')).toEqual({ input_per_mtok: 1, output_per_mtok: 5 });
  });

  it('charges unknown models the fallback price, never zero', () => {
    expect(priceOf('my-local-llama')).toEqual(FALLBACK_PRICE);
    expect(costUsd('my-local-llama', { input_tokens: 1000, output_tokens: 1000 })).toBe(0.09);
  });

  it('lets LLM_PRICES add and override models', () => {
    const config = loadConfig({
      DATA_DIR: '/tmp/llm-prices-test',
      JWT_SECRET: 'x'.repeat(32),
      LLM_PRICES: '{"My-Local-Llama":{"input_per_mtok":0.5,"output_per_mtok":1},"gpt-4o":{"input_per_mtok":1,"output_per_mtok":2}}',
    });
    expect(costUsd('my-local-llama', { input_tokens: 2_000_000, output_tokens: 1_000_000 }, config.llmPrices)).toBe(2);
    expect(priceOf('gpt-4o-2024-08-06', config.llmPrices)).toEqual({ input_per_mtok: 1, output_per_mtok: 2 });
    expect(loadConfig({ DATA_DIR: '/tmp/llm-prices-test', JWT_SECRET: 'x'.repeat(32) }).llmPrices).toEqual({});
  });

  it.each([
    ['not json', 'LLM_PRICES: is not valid JSON'],
    ['[1]', 'LLM_PRICES: must be a JSON object'],
    ['{"m":{"input_per_mtok":1}}', 'at "m.output_per_mtok"'],
    ['{"m":{"input_per_mtok":-1,"output_per_mtok":1}}', 'at "m.input_per_mtok"'],
    ['{"m":{"input_per_mtok":1,"output_per_mtok":1,"extra":2}}', 'at "m"'],
  ])('rejects LLM_PRICES=%s at start with a ConfigError', (raw, message) => {
    let thrown: unknown = null;
    try {
      loadConfig({ DATA_DIR: '/tmp/llm-prices-test', JWT_SECRET: 'x'.repeat(32), LLM_PRICES: raw });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ variable: 'LLM_PRICES' });
    expect((thrown as ConfigError).message).toContain(message);
  });
});
