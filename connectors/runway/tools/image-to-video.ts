/** runway.media_image_to_video: starts animating a still image; answers a job id to poll. */
import { ToolError, type ConnectorTool } from '../../contract.js';
import { runwayCall, runwayClient } from '../client.js';
import { DEFAULT_IMAGE_TO_VIDEO_MODEL, pixelRatio, requireEnabled, settingsOf } from '../settings.js';
import { durationProperty, estimatedCredits, handOver, jobAnswer, modelProperty, promptProperty, ratioProperty, waitProperty } from './shared.js';

export const imageToVideoTool: ConnectorTool = {
  name: 'media_image_to_video',
  effect: 'write',
  description:
    'Start generating a short video from an image (its first frame), optionally guided by a prompt (asynchronous, spends credits). ' +
    'The image must be at a publicly reachable HTTPS URL (or a data: URI). By default waits and answers the video as a file of the run; ' +
    'with wait: false answers `job_id` at once (check it with media_job_status). ' +
    'Defaults: 4 seconds, 16:9.',
  input_schema: {
    type: 'object',
    properties: {
      image_url: { type: 'string', minLength: 1, maxLength: 5_000_000, description: 'publicly reachable HTTPS URL of the image, or a data:image/... URI' },
      prompt: promptProperty,
      model: modelProperty,
      duration: durationProperty,
      ratio: ratioProperty,
      wait: waitProperty,
    },
    required: ['image_url'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const settings = settingsOf(ctx.config);
    requireEnabled(settings, 'video');
    const imageUrl = args['image_url'] as string;
    // Runway fetches the image itself: only HTTPS URLs and data URIs can work
    if (!/^https:\/\/[^\s/]+\/\S*/.test(imageUrl) && !/^data:image\/[a-z+.-]+;base64,/.test(imageUrl)) {
      throw new ToolError('invalid_image_url', 'image_url must be a publicly reachable https:// URL or a data:image/...;base64 URI', {
        image_url: imageUrl.slice(0, 200),
      });
    }
    const model = (args['model'] as string | undefined) ?? settings.videoModel ?? DEFAULT_IMAGE_TO_VIDEO_MODEL;
    const ratio = (args['ratio'] as string | undefined) ?? settings.ratio;
    const duration = (args['duration'] as number | undefined) ?? settings.duration;
    const size = pixelRatio(ratio, 'video', model);
    const prompt = args['prompt'] as string | undefined;
    const body = { model, promptImage: imageUrl, ratio: size, duration, ...(prompt === undefined ? {} : { promptText: prompt }) } as Parameters<
      ReturnType<typeof runwayClient>['imageToVideo']['create']
    >[0];
    const task = await runwayCall(ctx.signal, (options) => runwayClient(settings, ctx.net).imageToVideo.create(body, options));
    const fields = { kind: 'video', model, ratio, duration };
    const handed = await handOver(ctx, 'media_image_to_video', [{ id: task.id, cost: estimatedCredits(model, duration) }], fields, args['wait'] !== false);
    return handed ?? jobAnswer(task.id, fields);
  },
};
