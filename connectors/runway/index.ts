/**
 * The built-in `runway` connector (media generation) over the official
 * `@runwayml/sdk`: text to video, image to video, text to image as
 * asynchronous jobs, and a status tool to poll them. No sync: live calls only.
 */
import type { ConnectorPlugin } from '../contract.js';
import { DEFAULT_DURATION, DEFAULT_RATIO, MEDIA_KINDS, RATIOS } from './settings.js';
import { imageToVideoTool } from './tools/image-to-video.js';
import { jobStatusTool } from './tools/job-status.js';
import { textToImageTool } from './tools/text-to-image.js';
import { textToVideoTool } from './tools/text-to-video.js';
import { validateRunway } from './validate.js';

export function createRunwayPlugin(): ConnectorPlugin {
  return {
    kind: 'runway',
    version: '1.0.0',
    contract: '^1',
    description: 'Runway media generation: videos from text or an image, images from text, as jobs to poll.',
    configSchema: {
      type: 'object',
      properties: {
        api_key: { type: 'string', minLength: 1, writeOnly: true, description: 'the Runway API key' },
        base_url: { type: 'string', format: 'uri', description: 'the API base URL; default https://api.dev.runwayml.com' },
        default_model: { type: 'string', minLength: 1, description: 'default video model' },
        default_image_model: { type: 'string', minLength: 1, description: 'default image model' },
        default_duration: { type: 'integer', minimum: 2, maximum: 10, default: DEFAULT_DURATION, description: 'default video duration, seconds' },
        default_ratio: { enum: [...RATIOS], default: DEFAULT_RATIO, description: 'default aspect ratio' },
        enabled_tools: {
          type: 'array',
          items: { enum: [...MEDIA_KINDS] },
          uniqueItems: true,
          default: [...MEDIA_KINDS],
          description: 'which generation tools the source offers: `video`, `image`',
        },
      },
      required: ['api_key'],
      additionalProperties: false,
    },
    validate: validateRunway,
    tools: [textToVideoTool, imageToVideoTool, textToImageTool, jobStatusTool],
  };
}
