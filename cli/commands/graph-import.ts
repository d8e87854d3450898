/**
 * `graph import --file F`: a bulk load through POST /graph/import, the file
 * streamed from disk (never read whole). NDJSON or CSV, by `--format` or the
 * file's extension (`.csv`; `.ndjson`, `.jsonl`, `.json`).
 */
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Command } from '../command.js';
import { usage } from '../errors.js';

const CONTENT_TYPES = { ndjson: 'application/x-ndjson', csv: 'text/csv' } as const;
const BY_EXTENSION: Readonly<Record<string, keyof typeof CONTENT_TYPES>> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.json': 'ndjson' };

interface ImportAnswer {
  readonly realm: string;
  readonly mode: string;
  readonly nodes: number;
  readonly relationships: number;
  readonly method: string;
}

export const graphImportCommands: readonly Command[] = [
  {
    name: 'graph import',
    summary: 'Bulk-load nodes and relationships from an NDJSON or CSV file (streamed)',
    usage: ['--file <path> (required) [--format ndjson|csv] (default: by extension) [--mode create|merge] (default create) [--realm <name>]'],
    options: { file: { type: 'string' }, format: { type: 'string' }, mode: { type: 'string' }, realm: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const file = args.required('file');
      const found = await stat(file).catch(() => null);
      if (!found?.isFile()) throw usage(`--file ${file} is not a file`);
      const byExtension = BY_EXTENSION[extname(file).toLowerCase()];
      const format = args.string('format') === undefined && byExtension ? byExtension : args.choice('format', ['ndjson', 'csv'], 'ndjson');
      const mode = args.choice('mode', ['create', 'merge'], 'create');
      const answer = await api().upload<ImportAnswer>('/graph/import', { realm: args.string('realm'), mode }, file, found.size, {
        method: 'POST',
        contentType: CONTENT_TYPES[format],
      });
      output.result(
        answer,
        () => `imported ${answer.nodes} nodes and ${answer.relationships} relationships into realm ${answer.realm} (${answer.mode}, ${answer.method})`,
      );
    },
  },
];
