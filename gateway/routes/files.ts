/**
 * /files: the organization's file store. Paths travel in the `path` query
 * parameter (they hold slashes). Upload streams the body (up to
 * FILES_MAX_UPLOAD_BYTES) into a temporary file as it arrives; download
 * streams too.
 */
import picomatch from 'picomatch';
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { ARTIFACTS_FOLDER, isArtifactPath } from '../../runtime/files/artifacts.js';
import { normalizeRemotePath } from '../../runtime/files/paths.js';
import type { FileInfo } from '../../runtime/files/store.js';
import { streamOf } from '../http.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const fileSchema = z.object({ path: z.string(), size: z.number().int(), content_type: z.string(), modified_at: z.string() });
const pathQuery = z.object({ path: z.string().min(1).max(2048) });
const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((value) => value === 'true' || value === '1' || value === '');

const listQuery = pageQuery.extend({
  filter: z.string().min(1).max(500).optional(),
  /** @default name */
  sort: z.enum(['name', 'size', 'modified']).default('name'),
  desc: flag,
  /** a folder to list under */
  prefix: z.string().max(2048).optional(),
});

/**
 * A glob over the path; a pattern without `/` matches the file name at any
 * depth (`*.csv`). Thrown when the pattern does not compile (unbalanced brackets).
 */
function globMatcher(pattern: string): (path: string) => boolean {
  try {
    return picomatch(pattern, { strictBrackets: true, dot: true, basename: !pattern.includes('/') });
  } catch (error) {
    throw new ServiceError('validation_error', `invalid filter pattern "${pattern}": ${(error as Error).message}`, { field: 'filter' });
  }
}

const comparators: Record<'name' | 'size' | 'modified', (a: FileInfo, b: FileInfo) => number> = {
  name: (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  size: (a, b) => a.size - b.size || comparators.name(a, b),
  modified: (a, b) => a.modified_at.localeCompare(b.modified_at) || comparators.name(a, b),
};

/** Cursors here are offsets into the sorted listing (the listing is computed per request). */
function offsetOf(query: { readonly cursor?: string | undefined }): number {
  if (query.cursor === undefined) return 0;
  const offset = Number(decodeCursor(query, query.cursor));
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
  return offset;
}

export function fileRoutes({ files, config }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/files',
      tag: 'files',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'List files; `filter` is a glob, `sort` name|size|modified, `desc` reverses',
      query: listQuery,
      response: pageSchema(fileSchema),
      handler: async ({ auth, query }) => {
        const matches = query.filter === undefined ? null : globMatcher(query.filter);
        const all = (await files.list(auth.orgId, query.prefix)).filter((file) => matches === null || matches(file.path));
        const compare = comparators[query.sort];
        all.sort(query.desc ? (a, b) => compare(b, a) : compare);
        const offset = offsetOf(query);
        const items = all.slice(offset, offset + query.limit);
        const next = offset + items.length;
        return { status: 200, json: { items, next_cursor: next < all.length ? encodeCursor(query, String(next)) : null, total: all.length } };
      },
    }),
    route({
      method: 'GET',
      path: '/files/info',
      tag: 'files',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'Size, content type, modification time and SHA-256 of one file',
      query: pathQuery,
      response: fileSchema.extend({ sha256: z.string() }),
      handler: async ({ auth, query }) => {
        const info = await files.info(auth.orgId, query.path);
        return { status: 200, json: { ...info, sha256: await files.sha256(auth.orgId, info.path) } };
      },
    }),
    route({
      method: 'GET',
      path: '/files/content',
      tag: 'files',
      auth: 'bearer',
      permission: 'file:read',
      summary: 'Download one file (streamed)',
      query: pathQuery,
      handler: async ({ auth, query }) => {
        const { info, stream } = await files.open(auth.orgId, query.path);
        const name = info.path.slice(info.path.lastIndexOf('/') + 1);
        return {
          status: 200,
          headers: {
            'content-type': info.content_type,
            // streamed chunked: the size travels in its own header (a Content-Length would contradict the chunking)
            'x-file-size': String(info.size),
            'last-modified': new Date(info.modified_at).toUTCString(),
            'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
          },
          body: streamOf(stream),
        };
      },
    }),
    route({
      method: 'PUT',
      path: '/files/content',
      tag: 'files',
      auth: 'bearer',
      permission: 'file:write',
      bodyKind: 'stream',
      maxBodyBytes: config.filesMaxUploadBytes,
      status: 201,
      summary: 'Upload (create or replace) one file; the body is the content',
      query: pathQuery,
      response: fileSchema.extend({ sha256: z.string() }),
      handler: async ({ auth, query, request }) => {
        // what a run wrote is its record: only the run writes there (files.write_artifact)
        const path = normalizeRemotePath(query.path);
        if (isArtifactPath(path)) {
          throw new ServiceError('forbidden', `${ARTIFACTS_FOLDER}/ holds the files runs wrote: it is read-only here (delete is allowed)`, { path });
        }
        return { status: 201, json: await files.write(auth.orgId, path, request.bodyStream ?? request.body) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/files/content',
      tag: 'files',
      auth: 'bearer',
      permission: 'file:write',
      summary: 'Delete one file',
      query: pathQuery,
      response: z.object({ path: z.string(), deleted: z.boolean() }),
      handler: async ({ auth, query }) => {
        const removed = await files.remove(auth.orgId, query.path);
        return { status: 200, json: { path: removed.path, deleted: true } };
      },
    }),
  ];
}
