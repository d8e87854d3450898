/** runway.media_text_to_video: starts a video generation from a prompt; answers a job id to poll. */
import type { ConnectorTool } from '../../contract.js';
import { runwayCall, runwayClient } from '../client.js';
import { DEFAULT_TEXT_TO_VIDEO_MODEL, pixelRatio, requireEnabled, settingsOf } from '../settings.js';
import { durationProperty, estimatedCredits, handOver, jobAnswer, modelProperty, promptProperty, ratioProperty, waitProperty } from './shared.js';

export const textToVideoTool: ConnectorTool = {
  name: 'media_text_to_video',
  effect: 'write',
  description:
    'Generate a short video from a text prompt (spends credits). By default waits and answers the video as a file of the run (`outputs`); ' +
    'with wait: false answers `job_id` at once: check it with media_job_status. Defaults: 4 seconds, 16:9.',
  input_schema: {
    type: 'object',
    properties: { prompt: promptProperty, model: modelProperty, duration: durationProperty, ratio: ratioProperty, wait: waitProperty },
    required: ['prompt'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const settings = settingsOf(ctx.config);
    requireEnabled(settings, 'video');
    const model = (args['model'] as string | undefined) ?? settings.videoModel ?? DEFAULT_TEXT_TO_VIDEO_MODEL;
    const ratio = (args['ratio'] as string | undefined) ?? settings.ratio;
    const duration = (args['duration'] as number | undefined) ?? settings.duration;
    const size = pixelRatio(ratio, 'video', model);
    const body = { model, promptText: args['prompt'] as string, ratio: size, duration } as Parameters<
      ReturnType<typeof runwayClient>['textToVideo']['create']
    >[0];
    const task = await runwayCall(ctx.signal, (options) => runwayClient(settings, ctx.net).textToVideo.create(body, options));
    const fields = { kind: 'video', model, ratio, duration };
    const handed = await handOver(ctx, 'media_text_to_video', [{ id: task.id, cost: estimatedCredits(model, duration) }], fields, args['wait'] !== false);
    return handed ?? jobAnswer(task.id, fields);
  },
};
