/**
 * Model turns of task and binding runs on worker processes (feature
 * `workers`): the `TurnRunner` the gateway plugs into the agent runtime.
 *
 * The run (its actor, tools, approvals, transcript, feed and SSE) stays in
 * the gateway; each model turn is one job on queue `agent`, kind
 * `model_turn`, id `<run id>.turn.<n>` (idempotent), whose payload holds only
 * ids: the input (endpoint, key, messages, tools) stays in this process's
 * memory while the turn is awaited, and a worker reads it with its fence
 * (`input`). Its text deltas come back (`deltas`) and go to the run's feed as
 * `content_delta`; its result settles the job and the awaiting effect returns
 * it to the machine. A worker that dies mid-turn loses its lease; the next
 * delivery starts the turn over (its deltas replace the lost delivery's in
 * the run's text; a live SSE reader sees both). Only the current fence is
 * heard, so the turn's result applies once.
 */
import { z } from 'zod';
import type { LiveRun } from '../../runtime/agent/live-run.js';
import type { RunnerTurnOutput, TurnRunner } from '../../runtime/agent/turn-runner.js';
import { ServiceError } from '../../runtime/errors.js';
import type { ChatMessage, ToolDefinition } from '../../runtime/llm/types.js';
import { META_TOOL_DEFINITIONS } from '../../runtime/tools/meta-tools.js';
import type { WorkerService } from './service.js';

const MODEL_TURN_KIND = 'model_turn';

/** what a worker gets for one turn (secrets included: never persisted, never logged) */
interface TurnInput {
  readonly run_id: string;
  readonly turn: number;
  readonly provider: string;
  /** null: the provider's official API */
  readonly base_url: string | null;
  readonly api_key: string | null;
  /** the endpoint is the organization's own: the worker calls it through its egress guard */
  readonly egress_guarded: boolean;
  readonly model: string;
  readonly temperature: number | null;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDefinition[];
}

interface Awaited {
  readonly run: LiveRun;
  readonly turn: number;
  readonly messages: readonly ChatMessage[];
  /** `run.text` before this turn: a new delivery's deltas start over from here */
  readonly base: number;
  /** the fence whose deltas were heard last */
  fence: string | null;
  /** ends the wait with an empty turn (the run was cancelled while the turn was still queued) */
  stop: () => void;
}

const EMPTY_TURN: RunnerTurnOutput = { text: '', toolCalls: [], finishReason: 'end_turn', usage: { input_tokens: 0, output_tokens: 0 } };

const toolCall = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  invalid_arguments: z.string().optional(),
});
const turnResult = z.union([
  z.object({
    text: z.string(),
    tool_calls: z.array(toolCall),
    finish_reason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']),
    usage: z.object({ input_tokens: z.number().int().min(0), output_tokens: z.number().int().min(0) }),
  }),
  z.object({ failure: z.object({ reason: z.string(), message: z.string() }) }),
]);

/** a turn the worker could not perform: `code` (e.g. `llm_provider_error`) becomes the run's failure reason */
class TurnFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class WorkerTurnRunner implements TurnRunner {
  private readonly awaited = new Map<string, Awaited>();

  constructor(private readonly workers: WorkerService) {}

  /** runs of a task or of a channel binding (chat replies, workflow steps and pipeline agents stay in-process) */
  takes(run: LiveRun): boolean {
    const { request } = run;
    return request.endpoint !== undefined && ((request.taskId ?? null) !== null || (request.bindingId ?? null) !== null);
  }

  async run(run: LiveRun, turn: number, messages: readonly ChatMessage[], signal: AbortSignal): Promise<RunnerTurnOutput> {
    const jobId = `${run.id}.turn.${turn}`;
    let stop = (): void => undefined;
    const stopped = new Promise<null>((resolve) => (stop = () => resolve(null)));
    this.awaited.set(jobId, { run, turn, messages, base: run.text.length, fence: null, stop });
    try {
      await this.workers.queue.enqueue({
        id: jobId,
        queue: 'agent',
        orgId: run.request.orgId,
        kind: MODEL_TURN_KIND,
        payload: { run_id: run.id, turn },
      });
      const info = await abortable(Promise.race([this.workers.queue.settled(jobId), stopped]), signal);
      if (info === null) return EMPTY_TURN;
      if (info.state !== 'done' || info.result === null) {
        throw new TurnFailed('worker_failed', `the model turn failed on the workers: ${info.error ?? 'no result'}`);
      }
      const parsed = turnResult.safeParse(info.result);
      if (!parsed.success) throw new TurnFailed('internal_error', 'a worker answered a model turn result of the wrong shape');
      if ('failure' in parsed.data) throw new TurnFailed(parsed.data.failure.reason, parsed.data.failure.message);
      const out = parsed.data;
      const base = this.awaited.get(jobId)?.base ?? run.text.length;
      // the run's text holds the deltas of the delivery that counted, whatever a lost one sent
      run.text = run.text.slice(0, base) + out.text;
      return {
        text: out.text,
        toolCalls: out.tool_calls.map((call) => ({
          id: call.id,
          name: call.name,
          arguments: call.arguments,
          ...(call.invalid_arguments === undefined ? {} : { invalid_arguments: call.invalid_arguments }),
        })),
        finishReason: out.finish_reason,
        usage: out.usage,
      };
    } finally {
      this.awaited.delete(jobId);
    }
  }

  /** a cancelled run's turn still queued ends now, empty (one a worker already holds finishes, as in-process turns do) */
  cancelled(run: LiveRun): void {
    for (const [jobId, awaited] of this.awaited) {
      if (awaited.run !== run) continue;
      void this.workers.queue.get(jobId).then(
        (info) => {
          if (info?.state === 'pending') awaited.stop();
        },
        () => undefined,
      );
    }
  }

  /** the turn's input for the worker holding `fence`; 409 `lease_lost` for a stale fence, 404 when the turn is no longer awaited */
  async input(jobId: string, fence: string): Promise<TurnInput> {
    await this.workers.requireLease(jobId, fence);
    const { run, turn, messages } = this.awaitedTurn(jobId);
    const { request } = run;
    const endpoint = request.endpoint;
    if (!endpoint) throw new ServiceError('not_found', `turn ${jobId} has no endpoint`);
    return {
      run_id: run.id,
      turn,
      provider: request.provider.name,
      base_url: endpoint.baseUrl,
      api_key: endpoint.apiKey,
      egress_guarded: endpoint.owner === 'organization',
      model: request.model,
      temperature: request.temperature ?? null,
      messages,
      tools: META_TOOL_DEFINITIONS,
    };
  }

  /** text deltas of the delivery holding `fence`, to the run's feed in order */
  async deltas(jobId: string, fence: string, deltas: readonly string[]): Promise<number> {
    await this.workers.requireLease(jobId, fence);
    const awaited = this.awaitedTurn(jobId);
    const { run } = awaited;
    if (awaited.fence !== fence) {
      // a new delivery starts the turn's text over
      awaited.fence = fence;
      run.text = run.text.slice(0, awaited.base);
    }
    for (const delta of deltas) {
      if (delta === '' || run.finished) continue;
      run.text += delta;
      run.feed.append('content_delta', { delta });
    }
    return deltas.length;
  }

  private awaitedTurn(jobId: string): Awaited {
    const awaited = this.awaited.get(jobId);
    if (!awaited) throw new ServiceError('not_found', `model turn ${jobId} is no longer awaited (its run ended or was cancelled)`);
    return awaited;
  }
}

/** the promise, or a rejection as soon as `signal` aborts (the job stays: its worker finds the turn no longer awaited) */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new TurnFailed('cancelled', 'the model turn was cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new TurnFailed('cancelled', 'the model turn was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
