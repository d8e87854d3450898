/**
 * The runway source config with its defaults (the spec's media-generation
 * table), and the mapping of the spec's aspect ratios to the pixel sizes the
 * Runway API takes.
 */
import { ToolError } from '../contract.js';

export const RATIOS = ['16:9', '1:1', '9:16'] as const;
export type Ratio = (typeof RATIOS)[number];
export const MEDIA_KINDS = ['video', 'image'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** @default duration 4 s, ratio 16:9 (spec: media generation defaults) */
export const DEFAULT_DURATION = 4;
export const DEFAULT_RATIO: Ratio = '16:9';
/** Runway's current models for each job; a source may name others */
export const DEFAULT_TEXT_TO_VIDEO_MODEL = 'gen4.5';
export const DEFAULT_IMAGE_TO_VIDEO_MODEL = 'gen4_turbo';
const DEFAULT_IMAGE_MODEL = 'gen4_image';

export interface RunwaySettings {
  readonly apiKey: string;
  readonly baseUrl: string | undefined;
  readonly videoModel: string | undefined;
  readonly imageModel: string;
  readonly duration: number;
  readonly ratio: string;
  readonly enabled: readonly MediaKind[];
}

export function settingsOf(config: Readonly<Record<string, unknown>>): RunwaySettings {
  return {
    apiKey: typeof config['api_key'] === 'string' ? config['api_key'] : '',
    baseUrl: config['base_url'] as string | undefined,
    videoModel: config['default_model'] as string | undefined,
    imageModel: (config['default_image_model'] as string | undefined) ?? DEFAULT_IMAGE_MODEL,
    duration: (config['default_duration'] as number | undefined) ?? DEFAULT_DURATION,
    ratio: (config['default_ratio'] as string | undefined) ?? DEFAULT_RATIO,
    enabled: (config['enabled_tools'] as MediaKind[] | undefined) ?? MEDIA_KINDS,
  };
}

/** a disabled kind answers a clear error (the catalog already hides its tools: this guards direct calls) */
export function requireEnabled(settings: RunwaySettings, kind: MediaKind): void {
  if (!settings.enabled.includes(kind)) {
    throw new ToolError('tool_disabled', `${kind} generation is disabled for this source (enabled_tools: ${settings.enabled.join(', ') || 'none'})`, {
      enabled_tools: [...settings.enabled],
    });
  }
}

const VIDEO_SIZES: Record<Ratio, string> = { '16:9': '1280:720', '1:1': '960:960', '9:16': '720:1280' };
const IMAGE_SIZES: Record<Ratio, string> = { '16:9': '1920:1080', '1:1': '1024:1024', '9:16': '1080:1920' };
/** models that take fewer than the three ratios (their API schema lists only landscape and portrait sizes) */
const MODEL_RATIOS: Record<string, readonly Ratio[]> = { 'gen4.5': ['16:9', '9:16'], 'veo3.1': ['16:9', '9:16'], 'veo3.1_fast': ['16:9', '9:16'] };

/** The pixel size for a ratio; throws `unsupported_ratio` naming what the model takes. */
export function pixelRatio(ratio: string, kind: MediaKind, model: string): string {
  const supported = MODEL_RATIOS[model] ?? RATIOS;
  if (!(supported as readonly string[]).includes(ratio)) {
    throw new ToolError('unsupported_ratio', `unsupported ratio "${ratio}" for ${model}: use ${supported.join(', ')}`, {
      ratio,
      model,
      supported: [...supported],
    });
  }
  return (kind === 'video' ? VIDEO_SIZES : IMAGE_SIZES)[ratio as Ratio];
}
