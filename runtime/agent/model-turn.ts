/**
 * One model turn of a run: streams the provider's answer (the two catalog
 * meta-tools offered), sends each text delta to the run's feed as it comes,
 * and answers the whole text, the tool calls, usage and cost.
 */
import type { TurnOutput } from '../../actors/agent-run.types.js';
import { META_TOOL_DEFINITIONS } from '../tools/meta-tools.js';
import { costUsd, type PriceTable } from '../llm/prices.js';
import type { ChatMessage, ToolCall, Usage } from '../llm/types.js';
import type { LiveRun } from './live-run.js';

export async function modelTurn(run: LiveRun, messages: readonly ChatMessage[], signal: AbortSignal, prices: PriceTable): Promise<TurnOutput> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let finishReason: TurnOutput['finishReason'] = 'end_turn';
  let usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const stream = run.request.provider.stream({
    model: run.request.model,
    messages,
    tools: META_TOOL_DEFINITIONS,
    signal,
    ...(run.request.temperature === undefined ? {} : { temperature: run.request.temperature }),
  });
  for await (const event of stream) {
    if (event.type === 'text_delta') {
      if (event.text === '' || signal.aborted) continue;
      text += event.text;
      run.text += event.text;
      run.feed.append('content_delta', { delta: event.text });
    } else if (event.type === 'tool_call') {
      toolCalls.push(event.call);
    } else {
      finishReason = event.finish_reason;
      usage = event.usage;
    }
  }
  return { text, toolCalls, finishReason, usage, costUsd: costUsd(run.request.model, usage, prices) };
}
