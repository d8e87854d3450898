/**
 * The Anthropic messages adapter (official `@anthropic-ai/sdk` client),
 * streaming with tool calling. System messages go to `system`, assistant tool
 * calls become `tool_use` blocks and tool results user `tool_result` blocks;
 * `input_json_delta` fragments are joined per content block and the call is
 * emitted at its `content_block_stop`.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, StopReason, Tool } from '@anthropic-ai/sdk/resources/messages';
import { withRetry } from './retry.js';
import { toAttemptError } from './sdk-errors.js';
import { toolCallFrom } from './tool-arguments.js';
import type { ProviderClientOptions } from './provider-options.js';
import { LlmError, type ChatMessage, type FinishReason, type LlmEvent, type LlmProvider, type LlmRequest, type ToolDefinition } from './types.js';

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

const FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  // the server paused a long turn: this turn is over, the loop may continue
  pause_turn: 'end_turn',
  refusal: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
} satisfies Record<StopReason, FinishReason>;

type Turn = { role: 'user' | 'assistant'; content: ContentBlockParam[] };

/** Consecutive messages of one role merge into one turn: the API expects user and assistant to alternate. */
function toAnthropicMessages(messages: readonly ChatMessage[]): { system: string | null; messages: MessageParam[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        // the API rejects empty text blocks
        push('user', message.content === '' ? [] : [{ type: 'text', text: message.content }]);
        break;
      case 'assistant':
        push('assistant', [
          ...(message.content === '' ? [] : [{ type: 'text' as const, text: message.content }]),
          ...(message.tool_calls ?? []).map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.arguments })),
        ]);
        break;
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }]);
        break;
    }
  }
  return { system: system.length > 0 ? system.join('\n\n') : null, messages: turns };
}

function toAnthropicTools(tools: readonly ToolDefinition[]): Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.input_schema, type: 'object' },
  }));
}

interface PendingCall {
  readonly id: string;
  readonly name: string;
  json: string;
}

export function createAnthropicProvider(options: ProviderClientOptions): LlmProvider {
  const baseUrl = options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL;
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs ?? 120_000,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    // the messages API's documented key header; this SDK version would send the key as a
    // Bearer token, which Anthropic-compatible gateways do not all accept
    defaultHeaders: { 'x-api-key': options.apiKey, authorization: null },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  async function* attempt(request: LlmRequest): AsyncGenerator<LlmEvent> {
    try {
      const { system, messages } = toAnthropicMessages(request.messages);
      const stream = await client.messages.create(
        {
          model: request.model,
          max_tokens: request.max_tokens ?? 4096,
          messages,
          ...(system !== null ? { system } : {}),
          ...(request.tools.length > 0 ? { tools: toAnthropicTools(request.tools) } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          stream: true,
        },
        { signal: request.signal },
      );
      const pending = new Map<number, PendingCall>();
      let inputTokens = 0;
      let outputTokens = 0;
      let stop: StopReason | null = null;
      let stopped = false;
      let calls = 0;
      for await (const event of stream) {
        switch (event.type) {
          case 'message_start': {
            const usage = event.message.usage;
            // cached prompt tokens are billed input too
            inputTokens = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
            outputTokens = usage.output_tokens;
            break;
          }
          case 'content_block_start':
            if (event.content_block.type === 'tool_use') {
              pending.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: '' });
            }
            break;
          case 'content_block_delta':
            if (event.delta.type === 'text_delta' && event.delta.text !== '') {
              yield { type: 'text_delta', text: event.delta.text };
            } else if (event.delta.type === 'input_json_delta') {
              const call = pending.get(event.index);
              if (call !== undefined) call.json += event.delta.partial_json;
            }
            break;
          case 'content_block_stop': {
            const call = pending.get(event.index);
            if (call !== undefined) {
              pending.delete(event.index);
              calls += 1;
              yield { type: 'tool_call', call: toolCallFrom(call.id, call.name, call.json) };
            }
            break;
          }
          case 'message_delta': {
            stop = event.delta.stop_reason ?? stop;
            // output_tokens is cumulative; input_tokens is repeated only by some servers
            outputTokens = event.usage.output_tokens;
            if (typeof event.usage.input_tokens === 'number') {
              inputTokens = event.usage.input_tokens + (event.usage.cache_creation_input_tokens ?? 0) + (event.usage.cache_read_input_tokens ?? 0);
            }
            break;
          }
          case 'message_stop':
            stopped = true;
            break;
        }
      }
      if (!stopped) {
        throw new LlmError('llm_provider_error', 'anthropic stream ended before message_stop: the answer is incomplete', 502);
      }
      let reason = (stop === null ? undefined : FINISH[stop]) ?? 'end_turn';
      if (calls > 0 && reason === 'end_turn') reason = 'tool_use';
      yield { type: 'done', finish_reason: reason, usage: { input_tokens: inputTokens, output_tokens: outputTokens } };
    } catch (error) {
      throw toAttemptError(error, 'anthropic', baseUrl, options.keyName, Anthropic);
    }
  }

  return {
    name: 'anthropic',
    stream: (request) => withRetry('anthropic', () => attempt(request), request.signal, options.retry),
  };
}
