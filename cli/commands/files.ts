/** `files ...`: the organization's file store (the /files API). */
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ApiClient } from '../api.js';
import type { Command } from '../command.js';
import { usage } from '../errors.js';
import { walkDirectory } from '../local-files.js';
import { formatBytes, table } from '../output.js';
import { remotePath, uploadAll } from '../uploader.js';
import { checkGlob } from '../values.js';

interface RemoteFile {
  readonly path: string;
  readonly size: number;
  readonly content_type: string;
  readonly modified_at: string;
}

/** Every page of a listing. */
async function listAll(api: ApiClient, query: Record<string, string | undefined>): Promise<RemoteFile[]> {
  const files: RemoteFile[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.json<{ items: RemoteFile[]; next_cursor: string | null }>('GET', '/files', { query: { ...query, limit: 200, cursor } });
    files.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return files;
}

/** A local file to upload, or a usage error naming why not. */
async function localFileSize(path: string): Promise<number> {
  const found = await stat(path).catch(() => null);
  if (!found?.isFile()) throw usage(`--input ${path} is not a file`);
  return found.size;
}

export const fileCommands: readonly Command[] = [
  {
    name: 'files list',
    summary: 'List remote files',
    usage: ['[--filter <glob>] [--sort name|size|modified] (default name) [--desc]'],
    options: { filter: { type: 'string' }, sort: { type: 'string' }, desc: { type: 'boolean' } },
    run: async ({ args, api, output }) => {
      const filter = args.string('filter');
      if (filter !== undefined) checkGlob(filter, '--filter');
      const sort = args.choice('sort', ['name', 'size', 'modified'], 'name');
      const files = await listAll(api(), { filter, sort, desc: args.flag('desc') ? 'true' : undefined });
      output.result({ items: files, total: files.length }, () =>
        files.length === 0
          ? 'no files'
          : table(
              ['PATH', 'SIZE', 'MODIFIED'],
              files.map((file) => [file.path, formatBytes(file.size), file.modified_at]),
            ),
      );
    },
  },
  {
    name: 'files download',
    summary: 'Download a remote file',
    usage: ['--path <remote> [--output <local>] (default: current directory, same file name)'],
    options: { path: { type: 'string' }, output: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const remote = args.required('path');
      const given = args.string('output');
      const target =
        given === undefined ? resolve(basename(remote)) : (await stat(given).catch(() => null))?.isDirectory() ? join(given, basename(remote)) : resolve(given);
      const response = await api().download('/files/content', { path: remote });
      if (response.body === null) throw usage(`the server sent no content for ${remote}`);
      // written beside the target and renamed: an interrupted download never leaves a truncated file under the real name
      const partial = `${target}.partial`;
      try {
        await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(partial));
        await rename(partial, target);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      const size = (await stat(target)).size;
      const expected = response.headers.get('x-file-size');
      if (expected !== null && Number(expected) !== size) {
        await rm(target, { force: true });
        throw usage(`download of ${remote} was cut short (${size} of ${expected} bytes): try again`);
      }
      output.result({ path: remote, output: target, size }, () => `downloaded ${remote} to ${target} (${formatBytes(size)})`);
    },
  },
  {
    name: 'files upload',
    summary: 'Upload one local file (skipped when the remote copy is identical)',
    usage: ['--input <local> [--path <remote>] (default: the file name)'],
    options: { input: { type: 'string' }, path: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const input = args.required('input');
      const size = await localFileSize(input);
      const remote = args.string('path') ?? basename(input);
      const summary = await uploadAll(api(), output, [{ local: input, remote, size }], 'files upload');
      output.result(summary, () => (summary.skipped.length > 0 ? `${remote} is unchanged: not sent` : `uploaded ${input} to ${remote} (${formatBytes(size)})`));
    },
  },
  {
    name: 'files upload-dir',
    summary: 'Upload a directory recursively (identical remote files are skipped)',
    usage: ['--input <dir> [--prefix <remote folder>] (default empty)'],
    options: { input: { type: 'string' }, prefix: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const files = await walkDirectory(args.required('input'));
      const prefix = args.string('prefix');
      const summary = await uploadAll(
        api(),
        output,
        files.map((file) => ({ local: file.absolute, remote: remotePath(prefix, file.relative), size: file.size })),
        'files upload-dir',
      );
      output.result(summary, () => `${summary.uploaded.length} uploaded, ${summary.skipped.length} unchanged (${formatBytes(summary.bytes_sent)} sent)`);
    },
  },
  {
    name: 'files info',
    summary: 'Size, type and modification time of a remote file',
    usage: ['--path <remote>'],
    options: { path: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const info = await api().json<RemoteFile & { sha256: string }>('GET', '/files/info', { query: { path: args.required('path') } });
      output.result(info, () =>
        [
          `path: ${info.path}`,
          `size: ${info.size} (${formatBytes(info.size)})`,
          `type: ${info.content_type}`,
          `modified: ${info.modified_at}`,
          `sha256: ${info.sha256}`,
        ].join('\n'),
      );
    },
  },
];
