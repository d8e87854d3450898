/**
 * Local directory walks for `ingest scan|upload` and `files upload-dir`:
 * recursive, `/`-separated relative paths, include/exclude globs. Symlinks
 * are skipped (no loops, nothing outside the directory is sent).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { usage } from './errors.js';
import { checkGlob } from './values.js';

export interface LocalFile {
  /** relative to the walked directory, `/`-separated */
  readonly relative: string;
  readonly absolute: string;
  readonly size: number;
}

export interface WalkFilter {
  readonly include?: readonly string[] | undefined;
  readonly exclude?: readonly string[] | undefined;
}

/** Files under `dir`, sorted by path; thrown when `dir` is not a directory or a glob is invalid. */
export async function walkDirectory(dir: string, filter: WalkFilter = {}): Promise<LocalFile[]> {
  const includes = (filter.include ?? []).map((pattern) => checkGlob(pattern, '--include'));
  const excludes = (filter.exclude ?? []).map((pattern) => checkGlob(pattern, '--exclude'));
  const top = await stat(dir).catch(() => null);
  if (!top?.isDirectory()) throw usage(`${dir} is not a directory`);
  const files: LocalFile[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(relative === '' ? dir : join(dir, relative), { withFileTypes: true });
    for (const entry of entries) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) {
        if (includes.length > 0 && !includes.some((matches) => matches(child))) continue;
        if (excludes.some((matches) => matches(child))) continue;
        const absolute = join(dir, child);
        files.push({ relative: child, absolute, size: (await stat(absolute)).size });
      }
    }
  };
  await walk('');
  return files.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
}

export interface ExtensionStats {
  readonly extension: string;
  readonly files: number;
  readonly bytes: number;
}

/** Counts and sizes per extension (lowercase, `(none)` without one), biggest first. */
export function statsByExtension(files: readonly LocalFile[]): ExtensionStats[] {
  const stats = new Map<string, { files: number; bytes: number }>();
  for (const file of files) {
    const extension = extname(file.relative).toLowerCase() || '(none)';
    const entry = stats.get(extension) ?? { files: 0, bytes: 0 };
    entry.files += 1;
    entry.bytes += file.size;
    stats.set(extension, entry);
  }
  return [...stats.entries()]
    .map(([extension, entry]) => ({ extension, ...entry }))
    .sort((a, b) => b.bytes - a.bytes || a.extension.localeCompare(b.extension));
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
