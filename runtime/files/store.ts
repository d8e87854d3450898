/**
 * The file store: a local folder (FILES_DIR) with one subfolder per
 * organization. Paths are checked lexically (paths.ts) and then on the real
 * file system, so a symlink planted inside an organization's folder can never
 * lead a read or a write outside it. Writes go to a temporary file renamed
 * into place, so a reader never sees half a file and a failed upload leaves
 * nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { lstat, mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ServiceError } from '../errors.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../file-modes.js';
import type { OrgId } from '../store/types.js';
import { contentTypeOf, normalizeRemotePath, PARTIAL_SUFFIX } from './paths.js';

export interface FileInfo {
  /** normalized remote path, `/`-separated, relative to the organization's folder */
  readonly path: string;
  readonly size: number;
  readonly content_type: string;
  readonly modified_at: string;
}

const notFound = (path: string): ServiceError => new ServiceError('not_found', `file ${path} not found`);

export class FileStore {
  constructor(private readonly rootDir: string) {}

  /** The organization's folder (created on first use) and its real path. */
  private async orgRoot(org: OrgId): Promise<string> {
    const root = join(this.rootDir, org);
    await mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
    return realpath(root);
  }

  /** thrown when the real location of `dir` is not inside `root` (a symlinked directory) */
  private async assertInside(root: string, dir: string, path: string): Promise<void> {
    const real = await realpath(dir);
    if (real !== root && !real.startsWith(root + sep)) throw notFound(path);
  }

  /** Absolute location of an existing regular file (no symlink anywhere on the way), or 404. */
  private async locate(org: OrgId, rawPath: string): Promise<{ path: string; absolute: string; size: number; mtime: Date }> {
    const path = normalizeRemotePath(rawPath);
    const root = await this.orgRoot(org);
    const absolute = join(root, ...path.split('/'));
    try {
      const entry = await lstat(absolute);
      if (!entry.isFile()) throw notFound(path);
      await this.assertInside(root, dirname(absolute), path);
      return { path, absolute, size: entry.size, mtime: entry.mtime };
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') throw notFound(path);
      throw error;
    }
  }

  async info(org: OrgId, rawPath: string): Promise<FileInfo> {
    const found = await this.locate(org, rawPath);
    return present(found.path, found.size, found.mtime);
  }

  /** SHA-256 of the content, streamed: clients compare it to skip re-sending an identical file. */
  async sha256(org: OrgId, rawPath: string): Promise<string> {
    const { absolute } = await this.locate(org, rawPath);
    const hash = createHash('sha256');
    await pipeline(createReadStream(absolute), hash);
    return hash.digest('hex');
  }

  /** Info and an open stream; the caller owns the stream. */
  async open(org: OrgId, rawPath: string): Promise<{ info: FileInfo; stream: ReadStream }> {
    const found = await this.locate(org, rawPath);
    return { info: present(found.path, found.size, found.mtime), stream: createReadStream(found.absolute) };
  }

  /**
   * Writes (or replaces) a file from bytes or a byte stream; returns its info
   * and SHA-256. Thrown when the path is invalid, a directory is in the way,
   * or a parent is a symlink leading out.
   */
  async write(org: OrgId, rawPath: string, content: Uint8Array | AsyncIterable<Uint8Array>): Promise<FileInfo & { sha256: string }> {
    const path = normalizeRemotePath(rawPath);
    const root = await this.orgRoot(org);
    const absolute = join(root, ...path.split('/'));
    const parent = dirname(absolute);
    try {
      await mkdir(parent, { recursive: true, mode: PRIVATE_DIR_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
        throw new ServiceError('conflict', `a file is in the way of ${path}`, { path });
      }
      throw error;
    }
    await this.assertInside(root, parent, path);
    const existing = await lstat(absolute).catch(() => null);
    if (existing?.isDirectory()) throw new ServiceError('conflict', `${path} is a directory`, { path });

    const temporary = `${absolute}.${randomBytes(6).toString('hex')}${PARTIAL_SUFFIX}`;
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const source = content instanceof Uint8Array ? Readable.from([content]) : Readable.from(content);
    try {
      // 'wx': never follow or reuse whatever sits at the temporary name
      await pipeline(source, hashing, createWriteStream(temporary, { flags: 'wx', mode: PRIVATE_FILE_MODE }));
      await rename(temporary, absolute);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const written = await stat(absolute);
    return { ...present(path, written.size, written.mtime), sha256: hash.digest('hex') };
  }

  async remove(org: OrgId, rawPath: string): Promise<FileInfo> {
    const found = await this.locate(org, rawPath);
    await rm(found.absolute);
    return present(found.path, found.size, found.mtime);
  }

  /** Every regular file under `prefix` (a folder), depth first; symlinks and partial uploads are skipped. */
  async list(org: OrgId, prefix?: string): Promise<FileInfo[]> {
    const root = await this.orgRoot(org);
    const start = prefix === undefined || prefix.replaceAll('/', '') === '' ? '' : normalizeRemotePath(prefix);
    const files: FileInfo[] = [];
    const walk = async (relative: string): Promise<void> => {
      const directory = relative === '' ? root : join(root, ...relative.split('/'));
      let entries;
      try {
        entries = await readdir(directory, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
        throw error;
      }
      for (const entry of entries) {
        const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory()) await walk(child);
        else if (entry.isFile() && !entry.name.endsWith(PARTIAL_SUFFIX)) {
          const entryStat = await lstat(join(directory, entry.name)).catch(() => null);
          if (entryStat?.isFile()) files.push(present(child, entryStat.size, entryStat.mtime));
        }
      }
    };
    if (start !== '') {
      const top = await lstat(join(root, ...start.split('/'))).catch(() => null);
      if (!top?.isDirectory()) return [];
    }
    await walk(start);
    return files;
  }
}

const present = (path: string, size: number, mtime: Date): FileInfo => ({
  path,
  size,
  content_type: contentTypeOf(path),
  modified_at: mtime.toISOString(),
});
