/** Argument schemas and the job answer shared by the generation tools. */
import { ToolError, type MediaJobView, type ToolContext } from '../../contract.js';
import { RATIOS } from '../settings.js';

export const promptProperty = { type: 'string', minLength: 1, maxLength: 1000, description: 'what should appear, in detail (up to 1000 characters)' } as const;
export const modelProperty = { type: 'string', minLength: 1, maxLength: 60, description: 'a Runway model id; default: the source default' } as const;
/** a string, not an enum: an unsupported ratio answers `unsupported_ratio` naming the supported ones */
export const ratioProperty = {
  type: 'string',
  minLength: 1,
  maxLength: 20,
  description: `aspect ratio: ${RATIOS.join(', ')}; default: the source default (16:9)`,
} as const;
export const durationProperty = { type: 'integer', minimum: 2, maximum: 10, description: 'seconds of video; default: the source default (4)' } as const;

export const POLL_HINT = 'media_job_status';

/** What a generation tool answers: the job to poll. */
export function jobAnswer(id: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { job_id: id, status: 'pending', ...fields, poll_with: POLL_HINT };
}

export const waitProperty = {
  type: 'boolean',
  default: true,
  description: 'true (default): wait for the generation and answer its outputs (files of the run); false: answer the job id at once',
} as const;

/** Runway's published credits per second of video (per image for image models); unknown models: null */
const CREDITS: Record<string, number> = { 'gen4.5': 12, gen4_turbo: 5, gen3a_turbo: 5, gen4_image: 8 };
export const estimatedCredits = (model: string, seconds: number): number | null => (CREDITS[model] === undefined ? null : CREDITS[model] * seconds);

/**
 * With the host's `media` port (in the service), the started tasks become durable jobs the host polls:
 * answers their outputs once they are finished (`wait`, the default; a failed job throws its code), or the
 * job ids at once. Without it (the plugin driven directly): null, the caller answers the task ids to poll.
 */
export async function handOver(
  ctx: ToolContext,
  tool: string,
  tasks: readonly { readonly id: string; readonly cost: number | null }[],
  fields: Record<string, unknown>,
  wait: boolean,
): Promise<Record<string, unknown> | null> {
  const media = ctx.ports?.media;
  if (media === undefined || ctx.sourceId === null) return null;
  const jobs: MediaJobView[] = [];
  for (const task of tasks) {
    jobs.push(await media.track({ sourceId: ctx.sourceId, runId: ctx.runId ?? null, tool, taskId: task.id, cost: task.cost, request: fields }));
  }
  const ids = jobs.length === 1 ? { job_id: jobs[0]?.id } : { job_ids: jobs.map((job) => job.id) };
  if (!wait) return { ...ids, status: 'queued', ...fields, poll_with: POLL_HINT };
  const done: MediaJobView[] = [];
  for (const job of jobs) done.push(await media.wait(job.id, ctx.signal));
  const failed = done.find((job) => job.status !== 'succeeded');
  if (failed !== undefined) {
    throw new ToolError(failed.error?.code ?? 'cancelled', failed.error?.message ?? 'the media job was cancelled', {
      job_id: failed.id,
      status: failed.status,
    });
  }
  const costs = done.map((job) => job.cost);
  return {
    ...ids,
    status: 'succeeded',
    ...fields,
    cost: costs.includes(null) ? null : costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0),
    outputs: done.flatMap((job) => job.outputs),
  };
}
