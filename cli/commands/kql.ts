/** `kql "<query>" --realm R`: KQL over a realm's context tables (POST /context/kql, the Advanced tier). */
import type { Command } from '../command.js';
import { table } from '../output.js';

interface KqlAnswer {
  readonly columns: { readonly name: string; readonly type: string }[];
  readonly rows: unknown[][];
  readonly stats: { readonly row_count: number; readonly truncated: boolean; readonly chart: string | null };
}

const text = (value: unknown): string => (value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

export const kqlCommands: readonly Command[] = [
  {
    name: 'kql',
    summary: "Run a KQL query over a realm's context tables (Advanced tier)",
    usage: ['"<query>" [--realm <name>] [--limit <n>] [--timeout-ms <n>]'],
    options: { realm: { type: 'string' }, limit: { type: 'string' }, 'timeout-ms': { type: 'string' } },
    positionals: { min: 1, max: 1 },
    run: async ({ args, api, output }) => {
      const body: Record<string, unknown> = { query: args.positionals[0], realm: args.string('realm') ?? 'default' };
      if (args.string('limit') !== undefined) body['limit'] = args.integer('limit', 10_000, 1, 100_000);
      if (args.string('timeout-ms') !== undefined) body['timeout_ms'] = args.integer('timeout-ms', 30_000, 1, 300_000);
      const answer = await api().json<KqlAnswer>('POST', '/context/kql', { body });
      output.result(answer, () => {
        const rendered = table(
          answer.columns.map((column) => column.name),
          answer.rows.map((row) => row.map(text)),
        );
        return `${rendered}\n(${answer.stats.row_count} rows${answer.stats.truncated ? ', truncated' : ''})`;
      });
    },
  },
];
