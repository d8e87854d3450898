/**
 * Request bodies are spilled to a file so DuckDB's native reader can parse
 * them (it reads files, not JavaScript buffers). Files live only for the
 * duration of one request; the folder is emptied when the engine starts, so a
 * crash leaves nothing behind for long.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomAlphanumeric } from '../runtime/crypto.js';

export class SpillFolder {
  constructor(readonly path: string) {}

  /** Creates the folder, removing what a previous process left. */
  reset(): void {
    rmSync(this.path, { recursive: true, force: true });
    mkdirSync(this.path, { recursive: true, mode: 0o700 });
  }

  /** Writes `body`, runs `work` with the file's path, then deletes the file. */
  async with<T>(body: Buffer, work: (file: string) => Promise<T>): Promise<T> {
    // wall clock: only makes spill file names unique and ordered
    const file = join(this.path, `${Date.now()}-${randomAlphanumeric(12)}.ndjson`);
    await writeFile(file, body, { mode: 0o600 });
    try {
      return await work(file);
    } finally {
      // the only expected failure is "already gone"; a leftover is removed at the next start
      await unlink(file).catch(() => undefined);
    }
  }
}
