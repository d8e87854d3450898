/**
 * Job kind `model_turn` (queue `agent`): one model turn of a task or binding
 * run whose run stays in the gateway. The payload holds only ids; the input
 * (endpoint, key, messages, tools) is read with the job's fence from
 * `GET /workers/jobs/:id/input`. The provider is built with the same adapters
 * as the gateway's (runtime/llm/), through the egress guard when the endpoint
 * is the organization's own. Text deltas go back in order, batched while a
 * send is in flight (`POST /workers/jobs/:id/events`); the result is the
 * turn (text, tool calls, finish reason, usage), or `{failure}` when the
 * provider refused (the provider adapters already retried): the run fails
 * with that code, and the job is not tried again. A turn the gateway no
 * longer awaits (its run ended or was cancelled: 404 on the input or on the
 * deltas) completes as abandoned.
 */
import { createLlmProvider, LlmError, type ChatMessage, type FinishReason, type ToolCall, type Usage } from '../runtime/llm/index.js';
import { GatewayError, type ClaimedJob } from './client.js';
import type { JobContext, JobHandler } from './handlers.js';

interface TurnInput {
  readonly provider: string;
  readonly base_url: string | null;
  readonly api_key: string | null;
  readonly egress_guarded: boolean;
  readonly model: string;
  readonly temperature: number | null;
  readonly messages: ChatMessage[];
  readonly tools: { name: string; description: string; input_schema: Record<string, unknown> }[];
}

const jobPath = (job: ClaimedJob, tail: string): string => `/workers/jobs/${encodeURIComponent(job.id)}/${tail}`;

/** the gateway no longer awaits the turn (its run ended or was cancelled) */
const notAwaited = (error: unknown): boolean => error instanceof GatewayError && error.status === 404;
const ABANDONED = { abandoned: true };

/** sends deltas in order, one request at a time; what arrives meanwhile goes in the next request */
function deltaSender(job: ClaimedJob, context: JobContext) {
  let buffer: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  let scheduled = false;
  const send = async (): Promise<void> => {
    scheduled = false;
    if (buffer.length === 0) return;
    const deltas = buffer;
    buffer = [];
    await context.client.post(jobPath(job, 'events'), { fence: job.fence, deltas });
  };
  return {
    push(text: string): void {
      buffer.push(text);
      if (scheduled) return;
      scheduled = true;
      chain = chain.then(send);
      // a failure surfaces at `flush`; nothing is left unhandled meanwhile
      chain.catch(() => undefined);
    },
    async flush(): Promise<void> {
      await chain;
      await send();
    },
  };
}

export function modelTurnHandler(guardedFetch: typeof fetch): JobHandler {
  return async (job, context) => {
    let input: TurnInput;
    try {
      input = await context.client.get<TurnInput>(`${jobPath(job, 'input')}?fence=${encodeURIComponent(job.fence)}`, context.signal);
    } catch (error) {
      if (notAwaited(error)) return ABANDONED;
      throw error;
    }
    let text = '';
    const toolCalls: ToolCall[] = [];
    let finishReason: FinishReason = 'end_turn';
    let usage: Usage = { input_tokens: 0, output_tokens: 0 };
    const deltas = deltaSender(job, context);
    try {
      const { provider, model } = createLlmProvider(
        { llm_provider: input.provider, llm_model: input.model },
        { baseUrl: input.base_url, apiKey: input.api_key, owner: input.egress_guarded ? 'organization' : 'operator' },
        { fetch: guardedFetch },
      );
      const stream = provider.stream({
        model,
        messages: input.messages,
        tools: input.tools,
        signal: context.signal,
        ...(input.temperature === null ? {} : { temperature: input.temperature }),
      });
      for await (const event of stream) {
        if (event.type === 'text_delta') {
          if (event.text === '') continue;
          text += event.text;
          deltas.push(event.text);
        } else if (event.type === 'tool_call') {
          toolCalls.push(event.call);
        } else {
          finishReason = event.finish_reason;
          usage = event.usage;
        }
      }
      await deltas.flush();
    } catch (error) {
      if (notAwaited(error)) return ABANDONED;
      if (error instanceof LlmError && !context.signal.aborted) {
        await deltas.flush();
        return { failure: { reason: error.code, message: error.message } };
      }
      throw error;
    }
    return { text, tool_calls: toolCalls, finish_reason: finishReason, usage };
  };
}
