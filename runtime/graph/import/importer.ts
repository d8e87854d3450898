/**
 * A bulk import from start to end: the streamed input is read into checked
 * records and spooled (nothing reaches the graph before the whole input has
 * passed its checks), then loaded by the engine, and the spool is removed
 * whatever happened.
 */
import { mkdir } from 'node:fs/promises';
import { ServiceError } from '../../errors.js';
import { PRIVATE_DIR_MODE } from '../../file-modes.js';
import { spoolCsv } from './csv-lines.js';
import { ndjsonRecords, type ImportFormat } from './records.js';
import { ImportSpool, type StoredTables } from './spool.js';

export type ImportMode = 'create' | 'merge';

export interface ImportInput {
  readonly body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  readonly format: ImportFormat;
  readonly mode: ImportMode;
  readonly maxJsonDepth: number;
}

export interface ImportResult {
  readonly nodes: number;
  readonly relationships: number;
  /** `copy`: one bulk transaction; `upsert`: batches of upserts (merge into tables holding rows) */
  readonly method: 'copy' | 'upsert';
}

/** the longest NDJSON line or CSV cell an import takes */
const MAX_LINE_BYTES = 1024 * 1024;

export async function runImport(
  spoolParent: string,
  stored: StoredTables,
  input: ImportInput,
  load: (spool: ImportSpool) => Promise<ImportResult>,
): Promise<ImportResult> {
  await mkdir(spoolParent, { recursive: true, mode: PRIVATE_DIR_MODE });
  const spool = await ImportSpool.create(spoolParent, stored);
  try {
    const options = { maxJsonDepth: input.maxJsonDepth, maxLineBytes: MAX_LINE_BYTES };
    if (input.format === 'csv') await spoolCsv(input.body, spool, options);
    else for await (const records of ndjsonRecords(input.body, options)) await spool.add(records);
    await spool.finish();
    if (spool.nodes + spool.relationships === 0) throw new ServiceError('validation_error', 'the import holds no nodes or relationships');
    return await load(spool);
  } finally {
    await spool.remove();
  }
}
