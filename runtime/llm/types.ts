/**
 * The LLM provider contract. Adapters (OpenAI-compatible chat completions,
 * Anthropic messages) turn one request into a stream of provider-neutral
 * events; the agent loop never sees a wire format.
 */

export interface ToolCall {
  /** provider-issued id, echoed back in the tool result message */
  readonly id: string;
  readonly name: string;
  /** parsed JSON arguments */
  readonly arguments: Record<string, unknown>;
  /**
   * Set only when the model's arguments were not a JSON object: the raw text it
   * sent (`arguments` is then `{}`), so the loop can answer the model with an error.
   */
  readonly invalid_arguments?: string;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly tool_calls?: readonly ToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly name: string; readonly content: string };

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object */
  readonly input_schema: Record<string, unknown>;
}

export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

export type FinishReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

export type LlmEvent =
  | { readonly type: 'text_delta'; readonly text: string }
  /** emitted once per call, when its arguments are complete */
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | { readonly type: 'done'; readonly finish_reason: FinishReason; readonly usage: Usage };

export interface LlmRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDefinition[];
  /** @default 4096 */
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly signal?: AbortSignal;
}

export interface LlmProvider {
  /** `openai` or `anthropic` */
  readonly name: string;
  /** streams one model turn; retries 429/5xx with backoff before the first event; throws LlmError */
  stream(request: LlmRequest): AsyncIterable<LlmEvent>;
}

export type LlmErrorCode =
  /** no provider, model or key configured */
  | 'llm_unconfigured'
  /** still rate limited after the retries */
  | 'llm_rate_limited'
  /** the provider answered an error (4xx other than 429, or 5xx after the retries) */
  | 'llm_provider_error'
  /** the provider could not be reached */
  | 'llm_unreachable'
  /** the request was aborted by the caller */
  | 'llm_aborted';

export class LlmError extends Error {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    /** HTTP status of the provider's answer, when there was one */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}
