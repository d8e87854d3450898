/**
 * The built-in `runway` connector (media generation) over the official
 * `@runwayml/sdk`: text to video, image to video, text to image as
 * asynchronous jobs, and a status tool to poll them. No sync: live calls only.
 * `enabled_tools` limits the tools a source shows (`visibleTools`); a direct call of a hidden one
 * still answers `tool_disabled`.
 */
import type { ConnectorPlugin } from '../contract.js';
import { DEFAULT_DURATION, DEFAULT_RATIO, MEDIA_KINDS, RATIOS, settingsOf } from './settings.js';
import { imageToVideoTool } from './tools/image-to-video.js';
import { jobStatusTool } from './tools/job-status.js';
import { textToImageTool } from './tools/text-to-image.js';
import { textToVideoTool } from './tools/text-to-video.js';
import { validateRunway } from './validate.js';
import { runwayJobs } from './jobs.js';

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
    // the service tracks the generations as durable jobs (the `media` port) and polls them with these
    requires: ['media'],
    jobs: runwayJobs,
    // `enabled_tools` hides the generation tools of the other kinds from the source's catalog; polling always stays
    visibleTools: (config) => {
      const { enabled } = settingsOf(config);
      return [
        ...(enabled.includes('video') ? [textToVideoTool.name, imageToVideoTool.name] : []),
        ...(enabled.includes('image') ? [textToImageTool.name] : []),
        jobStatusTool.name,
      ];
    },
  };
}
