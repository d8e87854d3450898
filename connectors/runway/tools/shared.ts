/** Argument schemas and the job answer shared by the generation tools. */
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
