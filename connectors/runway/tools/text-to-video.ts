/** runway.media_text_to_video: starts a video generation from a prompt; answers a job id to poll. */
import type { ConnectorTool } from '../../contract.js';
import { runwayCall, runwayClient } from '../client.js';
import { DEFAULT_TEXT_TO_VIDEO_MODEL, pixelRatio, requireEnabled, settingsOf } from '../settings.js';
import { durationProperty, jobAnswer, modelProperty, promptProperty, ratioProperty } from './shared.js';

export const textToVideoTool: ConnectorTool = {
  name: 'media_text_to_video',
  effect: 'write',
  description:
    'Start generating a short video from a text prompt (asynchronous, spends credits). Returns `job_id` at once: poll it with media_job_status ' +
    'until it succeeds (the answer then holds the video URLs) or fails. Defaults: 4 seconds, 16:9.',
  input_schema: {
    type: 'object',
    properties: { prompt: promptProperty, model: modelProperty, duration: durationProperty, ratio: ratioProperty },
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
    return jobAnswer(task.id, { kind: 'video', model, ratio, duration });
  },
};
