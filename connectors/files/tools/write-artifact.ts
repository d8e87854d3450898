/**
 * files.write_artifact: writes one file of the run's output (a report, a
 * CSV, an image) to `artifacts/<run id>/<path>` in the organization's file
 * store; writing the same path again replaces it. The content type follows
 * the extension, as for every stored file.
 */
import { portOf, ToolError, type ConnectorTool } from '../../contract.js';
import { requireRunId } from '../run-id.js';

/** the largest artifact, decoded: 10 MiB */
export const MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;

const ENCODINGS = ['utf8', 'base64'] as const;
type ArtifactEncoding = (typeof ENCODINGS)[number];

/** standard alphabet, padding optional; Buffer.from would silently skip anything else */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The store's refusals (the port's ToolErrors) as errors the model can act on; anything else is a failure of the tool. */
function toolErrorOf(error: unknown, path: string): unknown {
  if (!ToolError.is(error)) return error;
  if (error.code === 'validation_error' || error.code === 'not_found') return new ToolError('invalid_path', error.message, { path });
  if (error.code === 'conflict') return new ToolError('path_conflict', error.message, { path });
  return error;
}

/** The base64 text without line breaks or spaces; thrown (`invalid_arguments`) when it is not base64 at all. */
function compactBase64(content: string): string {
  const compact = content.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    throw new ToolError('invalid_arguments', 'content is not valid base64 (standard alphabet A-Z a-z 0-9 + /, optional = padding)', {
      issues: [{ path: 'content', message: 'is not valid base64' }],
    });
  }
  return compact;
}

export function writeArtifactTool(): ConnectorTool {
  return {
    name: 'write_artifact',
    effect: 'write',
    description:
      "Save a file as an artifact of this run (a report, a CSV export, a chart) so people can download it after the run. `path` is relative to the run's " +
      'artifact folder and may contain sub-folders ("report.md", "data/errors.csv"); its extension sets the content type (.md, .txt, .csv, .json, .html, ' +
      '.png, .pdf, ...; unknown: application/octet-stream). Writing the same path again replaces the file. Text goes in `content` as is; binary ' +
      `content is sent base64 with encoding "base64". At most ${MAX_ARTIFACT_BYTES / (1024 * 1024)} MiB. Returns the stored path, size and content type.`,
    input_schema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          minLength: 1,
          maxLength: 1000,
          description: 'relative file name, e.g. "report.md" or "charts/q1.png"; no ".." and no leading "/"',
        },
        content: { type: 'string', description: 'the file content: text, or base64 when encoding is "base64"' },
        encoding: { enum: [...ENCODINGS], default: 'utf8', description: '"utf8" (default) for text, "base64" for binary content' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      ctx.signal.throwIfAborted();
      const runId = requireRunId(ctx);
      const files = portOf(ctx, 'files');
      const relative = args['path'] as string;
      const content = args['content'] as string;
      const encoding = (args['encoding'] as ArtifactEncoding | undefined) ?? 'utf8';
      try {
        files.checkArtifactName(runId, relative);
      } catch (error) {
        throw toolErrorOf(error, relative);
      }
      const text = encoding === 'base64' ? compactBase64(content) : content;
      // measured before decoding: an oversized payload is never copied into a buffer
      const size = Buffer.byteLength(text, encoding);
      if (size > MAX_ARTIFACT_BYTES) {
        throw new ToolError('too_large', `an artifact is at most ${MAX_ARTIFACT_BYTES} bytes decoded; this one is ${size}`, {
          max_bytes: MAX_ARTIFACT_BYTES,
          size,
        });
      }
      const bytes = Buffer.from(text, encoding);
      // the last point before the write: a cancelled run writes nothing
      ctx.signal.throwIfAborted();
      try {
        const written = await files.writeArtifact(runId, relative, bytes);
        return { path: written.path, size: written.size, content_type: written.content_type };
      } catch (error) {
        throw toolErrorOf(error, relative);
      }
    },
  };
}
