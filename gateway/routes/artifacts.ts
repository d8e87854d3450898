/**
 * /artifacts: the files agent runs wrote (`files.write_artifact`), across
 * runs. They live in the file store under `artifacts/<run id>/<name>`; an
 * artifact's id is `art_` + base64url of `<run id>/<name>` (derived, so no
 * index is kept beside the files). Reading needs `file:read` like /files (an
 * artifact is a file; a task run's own listing stays under `task:read`);
 * deleting needs `file:write`. `created_at` is the time the file was written
 * (a run writing the same name again replaces it).
 */
import { z } from 'zod';
import type { Artifact } from '../../domains/artifacts/service.js';
import { artifactId } from '../../runtime/files/artifacts.js';
import { streamOf } from '../http.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** Downloads up to this size are sent whole with a Content-Length (every `files.write_artifact` file is, at 10 MiB at most). */
const WHOLE_DOWNLOAD_MAX_BYTES = 16 * 1024 * 1024;

const artifactSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  /** the task whose run wrote it; null for chat runs (and runs no longer on record) */
  task_id: z.string().nullable(),
  /** the conversation whose reply wrote it, for chat runs */
  conversation_id: z.string().nullable(),
  /** the file-store path, `artifacts/<run id>/<name>` (also readable through /files) */
  path: z.string(),
  /** the path inside the run's folder, as the run named it */
  name: z.string(),
  size: z.number().int(),
  content_type: z.string(),
  created_at: z.string(),
});

const listQuery = pageQuery.extend({
  run_id: z.string().min(1).max(100).optional(),
  task_id: z.string().min(1).max(100).optional(),
  /** `image/` matches every image; `text/csv` one type */
  content_type: z.string().min(1).max(200).optional(),
  created_after: z.string().datetime({ offset: true, message: 'created_after must be an ISO 8601 date-time' }).optional(),
});
const artifactParams = z.object({ id: z.string().min(1).max(2048) });

const present = ({ file, ref, run }: Artifact) => ({
  id: artifactId(ref),
  run_id: ref.runId,
  task_id: run?.task_id ?? null,
  conversation_id: run?.conversation_id ?? null,
  path: file.path,
  name: ref.name,
  size: file.size,
  content_type: file.content_type,
  created_at: file.modified_at,
});

export function artifactRoutes({ artifacts }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/artifacts',
      tag: 'artifacts',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'Files runs wrote, oldest run first; filters `run_id`, `task_id`, `content_type` (a prefix), `created_after`',
      query: listQuery,
      response: pageSchema(artifactSchema),
      handler: async ({ auth, query }) => {
        const from = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
        const page = await artifacts.list(auth.orgId, query, query.limit, from);
        const last = page.items.at(-1);
        return {
          status: 200,
          json: {
            items: page.items.map(present),
            next_cursor: last !== undefined && page.more ? encodeCursor(query, last.file.path) : null,
            total: page.total,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/artifacts/:id',
      tag: 'artifacts',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'One artifact: its run (and task), path, size, content type and SHA-256',
      params: artifactParams,
      response: artifactSchema.extend({ sha256: z.string() }),
      handler: async ({ auth, params }) => {
        const artifact = await artifacts.get(auth.orgId, params.id);
        return { status: 200, json: { ...present(artifact), sha256: artifact.sha256 } };
      },
    }),
    route({
      method: 'GET',
      path: '/artifacts/:id/content',
      tag: 'artifacts',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'Download an artifact (Content-Length, Content-Disposition: attachment)',
      params: artifactParams,
      handler: async ({ auth, params }) => {
        const { ref, info, stream } = await artifacts.open(auth.orgId, params.id);
        const baseName = ref.name.slice(ref.name.lastIndexOf('/') + 1);
        const headers = {
          'content-type': info.content_type,
          'last-modified': new Date(info.modified_at).toUTCString(),
          'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(baseName)}`,
        };
        if (info.size <= WHOLE_DOWNLOAD_MAX_BYTES) {
          // read whole: the transport then sends an exact Content-Length (a chunked stream cannot carry one)
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          return { status: 200, headers, body: Buffer.concat(chunks) };
        }
        return {
          status: 200,
          headers: { ...headers, 'x-file-size': String(info.size) },
          body: streamOf(stream),
        };
      },
    }),
    route({
      method: 'DELETE',
      path: '/artifacts/:id',
      tag: 'artifacts',
      auth: 'bearer',
      permission: 'file:write',
      summary: 'Delete an artifact',
      params: artifactParams,
      response: z.object({ id: z.string(), deleted: z.boolean() }),
      handler: async ({ auth, params }) => ({ status: 200, json: { id: artifactId(await artifacts.delete(auth.orgId, params.id)), deleted: true } }),
    }),
  ];
}
