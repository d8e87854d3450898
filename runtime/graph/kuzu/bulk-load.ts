/**
 * A spooled import (runtime/graph/import/) into the realm's database with
 * the engine's bulk COPY: the tables it needs are created or widened, then
 * every segment is COPY'd (nodes first), all in one transaction: all or
 * nothing. Runs inside the session's queue, so the check that the target
 * tables are empty and the load see the same database.
 *
 * `create`: a target table that holds rows is a 409 `conflict`. `merge`:
 * into empty tables the same COPY; otherwise (or when a value cannot travel
 * as COPY's CSV) the caller writes the spool as upserts instead.
 */
import { ServiceError, conflict } from '../../errors.js';
import { KEY_PROPERTY, quote } from '../names.js';
import type { ImportMode } from '../import/importer.js';
import type { ImportSpool } from '../import/spool.js';
import type { ColumnType } from '../values.js';
import { CSV_NULL } from './csv.js';
import type { FtsIndexes } from './fts-index.js';
import type { KeySets } from './key-sets.js';
import type { GraphSchema } from './schema.js';
import type { KuzuSession } from './session.js';

export interface BulkLoadParts {
  readonly session: KuzuSession;
  readonly schema: GraphSchema;
  readonly fts: FtsIndexes;
  readonly keySets: KeySets;
}

/** the counts loaded, or `upserts` when the spool must be written as upserts (see above) */
export async function bulkLoad(parts: BulkLoadParts, spool: ImportSpool, mode: ImportMode): Promise<{ nodes: number; relationships: number } | 'upserts'> {
  const { session, schema, fts, keySets } = parts;
  const filled = await filledTargets(parts, spool);
  if (filled.length > 0 && mode === 'create') {
    throw conflict(`the import's target tables already hold rows: ${filled.join(', ')} (import with mode=merge to upsert into them)`, { tables: filled });
  }
  if (filled.length > 0 || !spool.copyable) return 'upserts';
  const targets = [...spool.targets.values()];
  const columnsOf = (table: string): ReadonlyMap<string, ColumnType> => spool.columns.get(table) ?? new Map();
  const nodeLabels = new Set<string>();
  for (const target of targets) {
    if (target.kind === 'NODE') nodeLabels.add(target.table);
    else nodeLabels.add(target.from!).add(target.to!);
  }
  const changes = schema.planShapes([
    ...[...nodeLabels].map((name) => ({ name, kind: 'NODE' as const, columns: columnsOf(name) })),
    ...targets
      .filter((target) => target.kind === 'REL')
      .map((target) => ({ name: target.table, kind: 'REL' as const, columns: columnsOf(target.table), pair: `${target.from}>${target.to}` })),
  ]);
  // the engine drops an index only outside a transaction; the next search rebuilds it once
  for (const target of targets) if (target.kind === 'NODE') await fts.drop(target.table);
  const options = `header=false, parallel=${spool.multiline ? 'false' : 'true'}, auto_detect=false, delim=',', quote='"', escape='"', null_strings=['${CSV_NULL}']`;
  await session.exec('BEGIN TRANSACTION');
  try {
    for (const change of changes) await schema.apply(change);
    for (const target of [...targets.filter((t) => t.kind === 'NODE'), ...targets.filter((t) => t.kind === 'REL')]) {
      for (const segment of target.segments) {
        if (segment.rows === 0) continue;
        const statement =
          target.kind === 'NODE'
            ? `COPY ${quote(target.table)}(${[KEY_PROPERTY, ...segment.names].map(quote).join(', ')}) FROM '${segment.file}' (${options})`
            : `COPY ${quote(target.table)}${segment.names.length ? `(${segment.names.map(quote).join(', ')})` : ''} FROM '${segment.file}' (from='${target.from}', to='${target.to}', ${options})`;
        await session.exec(statement).catch((error: unknown) => {
          throw refused(error, spool.dir);
        });
      }
    }
    await session.exec('COMMIT');
  } catch (error) {
    await session.exec('ROLLBACK').catch(() => undefined);
    await schema.load().catch(() => undefined);
    throw error;
  } finally {
    keySets.clear();
  }
  return { nodes: spool.nodes, relationships: spool.relationships };
}

/** the import's target tables (node labels it gives nodes of, relationship types) that hold rows */
async function filledTargets({ session, schema }: BulkLoadParts, spool: ImportSpool): Promise<string[]> {
  const filled = new Set<string>();
  for (const target of spool.targets.values()) {
    if (filled.has(target.table) || !schema.table(target.table, target.kind)) continue;
    const statement =
      target.kind === 'NODE'
        ? `MATCH (n:${quote(target.table)}) RETURN count(n) > 0 AS filled`
        : `MATCH ()-[r:${quote(target.table)}]->() RETURN count(r) > 0 AS filled`;
    const [row] = await session.run(statement);
    if (row?.['filled'] === true) filled.add(target.table);
  }
  return [...filled];
}

/** the engine's refusal as a 400 (a duplicate key, a relationship whose end node is missing), spool paths left out */
function refused(error: unknown, dir: string): ServiceError {
  const message = (error instanceof Error ? error.message : String(error)).replaceAll(dir, '<import>');
  return new ServiceError('validation_error', `the graph refused the import (nothing was written): ${message}`, { engine_message: message });
}
