/**
 * Model turns of task and binding runs on worker processes (feature
 * `workers`): the `TurnRunner` the gateway plugs into the agent runtime.
 *
 * The run (its actor, tools, approvals, transcript, feed and SSE) stays in
 * the gateway; each model turn is handed over (runtime/agent/turn-runner.ts)
 * as one job on queue `agent`, kind `model_turn`, id `<run id>.turn.<n>`
 * (idempotent), whose payload holds only ids. The run waits in
 * `awaiting_turn` and parks after `AGENT_PARK_AFTER_MS` like any other wait.
 * A worker reads the turn's input with its fence (`input`): the run's
 * conversation (live, or from its parked record) and the organization's
 * endpoint and key as they are now (the parked run's site rebuilds them; a
 * key is never stored). Its text deltas go to the run's feed as
 * `content_delta` (`deltas`; a parked run's feed is read back for them).
 * The job's end (`settled`) delivers the turn to the run, which comes back
 * for it when parked: once, since only the current wait is answered. A
 * worker that dies mid-turn loses its lease; the next delivery starts the
 * turn over (the run's reply text is the turn's result; a reader of the
 * events sees both deliveries' deltas). A gateway restart finds the turns
 * its parked runs wait on and enqueues them again under the same id when the
 * queue forgot them (the in-process queue).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { DeferredWait } from '../../actors/agent-run.types.js';
import type { HandedTurns } from '../../runtime/agent/handed-turns.js';
import type { LiveRun } from '../../runtime/agent/live-run.js';
import type { RunnerTurnResult, TurnRunner } from '../../runtime/agent/turn-runner.js';
import { ServiceError } from '../../runtime/errors.js';
import type { JobInfo, JobSpec } from '../../runtime/jobs/queue.js';
import type { ChatMessage, ToolDefinition } from '../../runtime/llm/types.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
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

/** the job of turn `turn` of run `runId` (its id is the wait's key) */
const jobOf = (org: OrgId, runId: string, turn: number): JobSpec => ({
  id: `${runId}.turn.${turn}`,
  queue: 'agent',
  orgId: org,
  kind: MODEL_TURN_KIND,
  payload: { run_id: runId, turn },
});

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

/** what the agent runtime tells the turns' routes about the runs waiting on them */
type RunsPort = Pick<HandedTurns, 'awaitedTurn' | 'turnFeed'>;

export class WorkerTurnRunner implements TurnRunner {
  readonly kind = MODEL_TURN_KIND;

  constructor(
    private readonly workers: WorkerService,
    private readonly runs: RunsPort,
    private readonly logger: Logger,
  ) {}

  /** runs of a task or of a channel binding (chat replies, workflow steps and pipeline agents stay in-process) */
  takes(run: LiveRun): boolean {
    const { request } = run;
    return request.endpoint !== undefined && ((request.taskId ?? null) !== null || (request.bindingId ?? null) !== null);
  }

  waitOf(run: LiveRun, turn: number): DeferredWait {
    return { kind: MODEL_TURN_KIND, keys: [jobOf(run.request.orgId, run.id, turn).id] };
  }

  async handOver(run: LiveRun, turn: number): Promise<void> {
    await this.workers.queue.enqueue(jobOf(run.request.orgId, run.id, turn));
  }

  follow(org: OrgId, runId: string, wait: DeferredWait, deliver: (result: RunnerTurnResult) => Promise<boolean>): void {
    const jobId = wait.keys[0] ?? '';
    const turn = Number(jobId.slice(jobId.lastIndexOf('.') + 1));
    const settle = async (): Promise<void> => {
      // the same job again when the queue forgot it (the in-process queue after a restart): nothing when it holds it
      await this.workers.queue.enqueue(jobOf(org, runId, turn));
      await deliver(resultOf(await this.workers.queue.settled(jobId)));
    };
    settle().catch((error: unknown) => {
      // at shutdown the queue closes under the wait: the parked run follows its turn again after the restart
      if (error instanceof ServiceError && error.code === 'service_unavailable') return;
      this.logger.error({ err: error, run_id: runId, job_id: jobId }, 'model turn: its result could not be delivered to the run');
    });
  }

  /** the turn's input for the worker holding `fence`; 409 `lease_lost` for a stale fence, 404 when the turn is no longer awaited */
  async input(jobId: string, fence: string): Promise<TurnInput> {
    const job = await this.workers.requireLease(jobId, fence);
    const { runId, turn } = idsOf(job);
    const awaited = await this.runs.awaitedTurn(asOrgId(job.orgId), runId, jobId);
    const endpoint = awaited?.request.endpoint;
    if (!awaited || !endpoint) throw notAwaited(jobId);
    const { request, messages } = awaited;
    return {
      run_id: runId,
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

  /** text deltas of the delivery holding `fence`, to the run's feed in order (a parked run's too) */
  async deltas(jobId: string, fence: string, deltas: readonly string[]): Promise<number> {
    const job = await this.workers.requireLease(jobId, fence);
    const feed = await this.runs.turnFeed(asOrgId(job.orgId), idsOf(job).runId, jobId);
    if (!feed) throw notAwaited(jobId);
    for (const delta of deltas) if (delta !== '' && !feed.ended) feed.append('content_delta', { delta });
    return deltas.length;
  }
}

const notAwaited = (jobId: string): ServiceError => new ServiceError('not_found', `model turn ${jobId} is no longer awaited (its run ended or was cancelled)`);

function idsOf(job: JobInfo): { runId: string; turn: number } {
  const { run_id: runId, turn } = job.payload;
  if (job.kind !== MODEL_TURN_KIND || typeof runId !== 'string' || typeof turn !== 'number')
    throw new ServiceError('not_found', `job ${job.id} is not a model turn`);
  return { runId, turn };
}

/** the settled job as the turn's result: a worker's failure or a result of the wrong shape fails the run */
function resultOf(info: JobInfo): RunnerTurnResult {
  if (info.state !== 'done' || info.result === null) {
    return { failure: { reason: 'worker_failed', message: `the model turn failed on the workers: ${info.error ?? 'no result'}` } };
  }
  const parsed = turnResult.safeParse(info.result);
  if (!parsed.success) return { failure: { reason: 'internal_error', message: 'a worker answered a model turn result of the wrong shape' } };
  if ('failure' in parsed.data) return { failure: parsed.data.failure };
  const out = parsed.data;
  return {
    output: {
      text: out.text,
      toolCalls: out.tool_calls.map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ...(call.invalid_arguments === undefined ? {} : { invalid_arguments: call.invalid_arguments }),
      })),
      finishReason: out.finish_reason,
      usage: out.usage,
    },
  };
}
