/**
 * runway.media_job_status: where a generation job stands; its output URLs
 * once it succeeded. A failed job answers the spec's errors: a content-filter
 * rejection is `generation_failed`, an unusable source image
 * `invalid_image_url`, a job running far too long `timeout`.
 */
import { ToolError, type ConnectorTool } from '../../contract.js';
import { runwayCall, runwayClient } from '../client.js';
import { settingsOf } from '../settings.js';

/** a job not finished this long after its creation is reported as timed out @default 15 minutes */
const GENERATION_TIMEOUT_MS = 15 * 60_000;

export interface RunwayTask {
  readonly id: string;
  readonly status: 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  readonly createdAt: string;
  readonly progress?: number;
  readonly output?: string[];
  readonly failure?: string;
  readonly failureCode?: string;
}

export function failureOf(task: RunwayTask): ToolError {
  const code = task.failureCode ?? '';
  const details = { job_id: task.id, failure_code: code || null, failure: task.failure ?? null };
  if (code.startsWith('SAFETY.'))
    return new ToolError('generation_failed', 'the content filter rejected the generation; do not retry the same prompt or image', details);
  if (code.startsWith('ASSET.') || code === 'INPUT_PREPROCESSING.ASSET')
    return new ToolError('invalid_image_url', 'the source image could not be fetched or read', details);
  if (/TIMEOUT/.test(code)) return new ToolError('timeout', 'the generation took too long and was stopped', details);
  return new ToolError('generation_failed', `the generation failed: ${task.failure ?? code}`, details);
}

export const jobStatusTool: ConnectorTool = {
  name: 'media_job_status',
  effect: 'read',
  description:
    'Check a media generation job started by media_text_to_video, media_image_to_video or media_text_to_image. ' +
    'Answers `status` (pending, throttled, running, succeeded, cancelled), `progress` (0..1) and, once succeeded, `output_urls` (they expire: download or share them soon). ' +
    'A failed job answers an error (generation_failed, invalid_image_url, timeout). Poll every few seconds.',
  input_schema: {
    type: 'object',
    properties: { job_id: { type: 'string', minLength: 1, maxLength: 100, description: 'the job_id a generation tool returned' } },
    required: ['job_id'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    // a durable job of the service (`mjb_...`): its record, outputs already copied into the file store
    const tracked = await ctx.ports?.media?.get(args['job_id'] as string);
    if (tracked) {
      if (tracked.status === 'failed' && tracked.error) throw new ToolError(tracked.error.code, tracked.error.message, { job_id: tracked.id });
      return { job_id: tracked.id, status: tracked.status, progress: tracked.progress, cost: tracked.cost, outputs: tracked.outputs };
    }
    const client = runwayClient(settingsOf(ctx.config), ctx.net);
    const task = (await runwayCall(ctx.signal, (options) => client.tasks.retrieve(args['job_id'] as string, options))) as RunwayTask;
    if (task.status === 'FAILED') throw failureOf(task);
    const done = task.status === 'SUCCEEDED' || task.status === 'CANCELLED';
    // wall clock: createdAt is Runway's timestamp
    const runningFor = Date.now() - Date.parse(task.createdAt);
    if (!done && runningFor > GENERATION_TIMEOUT_MS) {
      throw new ToolError('timeout', `the generation has not finished after ${Math.round(runningFor / 60_000)} minutes`, {
        job_id: task.id,
        status: task.status.toLowerCase(),
      });
    }
    return {
      job_id: task.id,
      status: task.status.toLowerCase(),
      created_at: task.createdAt,
      progress: task.status === 'SUCCEEDED' ? 1 : (task.progress ?? 0),
      ...(task.status === 'SUCCEEDED' ? { output_urls: task.output ?? [] } : {}),
    };
  },
};
