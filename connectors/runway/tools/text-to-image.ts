/** runway.media_text_to_image: starts one image generation per image asked for; answers the job ids to poll. */
import type { ConnectorTool } from '../../contract.js';
import { runwayCall, runwayClient } from '../client.js';
import { pixelRatio, requireEnabled, settingsOf } from '../settings.js';
import { estimatedCredits, handOver, modelProperty, POLL_HINT, promptProperty, ratioProperty, waitProperty } from './shared.js';

const MAX_IMAGES = 4;

export const textToImageTool: ConnectorTool = {
  name: 'media_text_to_image',
  effect: 'write',
  description:
    'Generate images from a text prompt (spends credits; one job per image). By default waits and answers the images as files of the run; ' +
    `with wait: false answers \`job_ids\` at once (check each with media_job_status). Default ratio 16:9; at most ${MAX_IMAGES} images.`,
  input_schema: {
    type: 'object',
    properties: {
      prompt: promptProperty,
      model: modelProperty,
      ratio: ratioProperty,
      num_images: { type: 'integer', minimum: 1, maximum: MAX_IMAGES, default: 1, description: 'how many images (one job each)' },
      wait: waitProperty,
    },
    required: ['prompt'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const settings = settingsOf(ctx.config);
    requireEnabled(settings, 'image');
    const model = (args['model'] as string | undefined) ?? settings.imageModel;
    const ratio = (args['ratio'] as string | undefined) ?? settings.ratio;
    const size = pixelRatio(ratio, 'image', model);
    const body = { model, promptText: args['prompt'] as string, ratio: size } as Parameters<ReturnType<typeof runwayClient>['textToImage']['create']>[0];
    const client = runwayClient(settings, ctx.net);
    const jobIds: string[] = [];
    // one after the other: a failure (credits, moderation) stops before spending more
    for (let i = 0; i < ((args['num_images'] as number | undefined) ?? 1); i++) {
      const task = await runwayCall(ctx.signal, (options) => client.textToImage.create(body, options));
      jobIds.push(task.id);
    }
    const fields = { kind: 'image', model, ratio };
    const tasks = jobIds.map((id) => ({ id, cost: estimatedCredits(model, 1) }));
    const handed = await handOver(ctx, 'media_text_to_image', tasks, fields, args['wait'] !== false);
    return handed ?? { job_ids: jobIds, status: 'pending', ...fields, poll_with: POLL_HINT };
  },
};
