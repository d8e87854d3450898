/**
 * Uploads a set of local files to the file store, never sending one the
 * store already holds: a remote file with the same size is compared by
 * SHA-256 (`/files/info`) and skipped when equal. Each upload streams from
 * disk. Used by `files upload`, `files upload-dir` and `ingest upload`.
 */
import type { ApiClient } from './api.js';
import { sha256File } from './local-files.js';
import { formatBytes, type Output } from './output.js';

export interface UploadItem {
  readonly local: string;
  readonly remote: string;
  readonly size: number;
}

export interface UploadSummary {
  readonly uploaded: string[];
  readonly skipped: string[];
  readonly bytes_sent: number;
}

interface RemoteFile {
  readonly path: string;
  readonly size: number;
}

interface FilePage {
  readonly items: RemoteFile[];
  readonly next_cursor: string | null;
}

/** Remote sizes under a folder (all pages), to know which files may already be there. */
async function remoteSizes(api: ApiClient, prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let cursor: string | undefined;
  do {
    const page = await api.json<FilePage>('GET', '/files', { query: { prefix: prefix === '' ? undefined : prefix, limit: 200, cursor } });
    for (const file of page.items) sizes.set(file.path, file.size);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return sizes;
}

/** The remote folder shared by every item ('' when they share none). */
function commonFolder(items: readonly UploadItem[]): string {
  const folders = items.map((item) => item.remote.split('/').slice(0, -1));
  const first = folders[0] ?? [];
  let length = first.length;
  for (const folder of folders) {
    let same = 0;
    while (same < Math.min(length, folder.length) && folder[same] === first[same]) same += 1;
    length = same;
  }
  return first.slice(0, length).join('/');
}

export async function uploadAll(api: ApiClient, output: Output, items: readonly UploadItem[], label: string): Promise<UploadSummary> {
  const summary = { uploaded: [] as string[], skipped: [] as string[], bytes_sent: 0 };
  if (items.length === 0) return summary;
  const existing = await remoteSizes(api, commonFolder(items));
  const progress = output.progress(label, items.length, 'files');
  for (const item of items) {
    const remoteSize = existing.get(item.remote);
    if (remoteSize === item.size) {
      const [local, remote] = await Promise.all([sha256File(item.local), api.json<{ sha256: string }>('GET', '/files/info', { query: { path: item.remote } })]);
      if (local === remote.sha256) {
        summary.skipped.push(item.remote);
        progress.tick(`${item.remote} (unchanged, skipped)`);
        continue;
      }
    }
    await api.upload('/files/content', { path: item.remote }, item.local, item.size);
    summary.uploaded.push(item.remote);
    summary.bytes_sent += item.size;
    progress.tick(`${item.remote} (${formatBytes(item.size)})`);
  }
  progress.stop(`${label}: ${summary.uploaded.length} uploaded (${formatBytes(summary.bytes_sent)}), ${summary.skipped.length} unchanged`);
  return summary;
}

/** `prefix` + `relative`, with exactly one `/` between (an empty prefix adds nothing). */
export function remotePath(prefix: string | undefined, relative: string): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? relative : `${trimmed}/${relative}`;
}
