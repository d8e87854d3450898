/**
 * The OpenAI-compatible chat-completions adapter (official `openai` client),
 * streaming with tool calling. Tool call arguments arrive as fragments keyed by
 * `index`; each call is emitted once, when the next call starts or the turn ends.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { withRetry } from './retry.js';
import { toAttemptError } from './sdk-errors.js';
import { toolCallFrom } from './tool-arguments.js';
import type { ProviderClientOptions } from './provider-options.js';
import { LlmError, type ChatMessage, type FinishReason, type LlmEvent, type LlmProvider, type LlmRequest, type ToolDefinition, type Usage } from './types.js';

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  // a filtered answer ends the turn; the loop sees whatever text came before
  content_filter: 'end_turn',
};

function toOpenAiMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: message.content };
        return {
          role: 'assistant',
          content: message.content === '' ? null : message.content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.invalid_arguments ?? JSON.stringify(call.arguments) },
          })),
        };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    }
  });
}

function toOpenAiTools(tools: readonly ToolDefinition[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
  }));
}

/** Some OpenAI-compatible servers ignore `include_usage`: estimate (~4 characters a token) so cost caps still count. */
function estimatedUsage(request: LlmRequest, outputChars: number): Usage {
  const inputChars = JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  return { input_tokens: Math.ceil(inputChars / 4), output_tokens: Math.ceil(outputChars / 4) };
}

interface PendingCall {
  id: string;
  name: string;
  json: string;
}

/**
 * The official SDK's client for an OpenAI-compatible endpoint (chat and
 * embeddings): every option given explicitly so it reads nothing from the
 * environment, its own retries off (ours honour Retry-After), the egress
 * guard's fetch when the URL is a tenant's.
 */
export function openAiSdkClient(
  options: Pick<ProviderClientOptions, 'baseUrl' | 'apiKey' | 'timeoutMs' | 'fetch'>,
  defaultTimeoutMs: number,
): { readonly client: OpenAI; readonly baseUrl: string } {
  const baseUrl = options.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: baseUrl,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: options.timeoutMs ?? defaultTimeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return { client, baseUrl };
}

export function createOpenAiProvider(options: ProviderClientOptions): LlmProvider {
  const { client, baseUrl } = openAiSdkClient(options, 120_000);

  async function* attempt(request: LlmRequest): AsyncGenerator<LlmEvent> {
    try {
      const stream = await client.chat.completions.create(
        {
          model: request.model,
          messages: toOpenAiMessages(request.messages),
          ...(request.tools.length > 0 ? { tools: toOpenAiTools(request.tools) } : {}),
          max_completion_tokens: request.max_tokens ?? 4096,
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: request.signal },
      );
      const pending = new Map<number, PendingCall>();
      let finish: string | null = null;
      let usage: Usage | null = null;
      let outputChars = 0;
      let calls = 0;

      const flush = function* (below: number): Generator<LlmEvent> {
        for (const index of [...pending.keys()].sort((a, b) => a - b)) {
          if (index >= below) break;
          const call = pending.get(index);
          pending.delete(index);
          if (call === undefined) continue;
          calls += 1;
          yield { type: 'tool_call', call: toolCallFrom(call.id, call.name, call.json) };
        }
      };

      for await (const chunk of stream) {
        if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens };
        const choice = chunk.choices[0];
        if (choice === undefined) continue;
        const text = choice.delta.content ?? choice.delta.refusal ?? '';
        if (text !== '') {
          outputChars += text.length;
          yield { type: 'text_delta', text };
        }
        for (const fragment of choice.delta.tool_calls ?? []) {
          // a new index means every lower one is complete
          yield* flush(fragment.index);
          const call = pending.get(fragment.index) ?? { id: '', name: '', json: '' };
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.name += fragment.function.name;
          if (fragment.function?.arguments) {
            call.json += fragment.function.arguments;
            outputChars += fragment.function.arguments.length;
          }
          pending.set(fragment.index, call);
        }
        if (choice.finish_reason) {
          finish = choice.finish_reason;
          yield* flush(Number.POSITIVE_INFINITY);
        }
      }
      if (finish === null) {
        throw new LlmError('llm_provider_error', 'openai stream ended before a finish_reason: the answer is incomplete', 502);
      }
      yield* flush(Number.POSITIVE_INFINITY);
      let reason = FINISH[finish] ?? 'end_turn';
      // some compatible servers say `stop` after tool calls; the calls are what the loop must act on
      if (calls > 0 && reason === 'end_turn') reason = 'tool_use';
      yield { type: 'done', finish_reason: reason, usage: usage ?? estimatedUsage(request, outputChars) };
    } catch (error) {
      throw toAttemptError(error, 'openai', baseUrl, options.keyName, OpenAI);
    }
  }

  return {
    name: 'openai',
    stream: (request) => withRetry('openai', () => attempt(request), request.signal, options.retry),
  };
}
