/**
 * A spooled import written as upserts (merge into tables that hold rows, or
 * values COPY cannot carry): the segments are read back and sent in batches
 * of the upsert routes' size, nodes first, each batch its own transaction.
 */
import { createReadStream } from 'node:fs';
import type { GraphNodeInput, GraphRelationshipInput } from '../store.js';
import type { ColumnType } from '../values.js';
import { CSV_NULL } from '../kuzu/csv.js';
import { CsvReader, type CsvCell } from './csv-reader.js';
import type { ImportSpool, Segment, Target } from './spool.js';

const BATCH = 10_000;

export interface UpsertSink {
  upsertNodes(nodes: readonly GraphNodeInput[]): Promise<number>;
  upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<number>;
}

/** upserts every spooled row; the counts of distinct records the batches reported */
export async function replaySpool(spool: ImportSpool, sink: UpsertSink): Promise<{ nodes: number; relationships: number }> {
  let nodes = 0;
  let relationships = 0;
  const ordered = [...spool.targets.values()].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'NODE' ? -1 : 1));
  for (const target of ordered) {
    const columns = spool.columns.get(target.table) ?? new Map<string, ColumnType>();
    for (const segment of target.segments) {
      for await (const rows of segmentRows(segment)) {
        if (target.kind === 'NODE') {
          nodes += await sink.upsertNodes(
            rows.map((cells) => ({ label: target.table, properties: { _key: cells[0]!, ...propsOf(cells, 1, segment, columns) } })),
          );
        } else {
          relationships += await sink.upsertRelationships(rows.map((cells) => relationshipOf(target, cells, segment, columns)));
        }
      }
    }
  }
  return { nodes, relationships };
}

function relationshipOf(target: Target, cells: readonly CsvCell[], segment: Segment, columns: ReadonlyMap<string, ColumnType>): GraphRelationshipInput {
  return {
    type: target.table,
    from_label: target.from!,
    from_key: cells[0]!,
    to_label: target.to!,
    to_key: cells[1]!,
    properties: propsOf(cells, 2, segment, columns),
  };
}

function propsOf(cells: readonly CsvCell[], first: number, segment: Segment, columns: ReadonlyMap<string, ColumnType>): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  segment.names.forEach((name, at) => {
    const cell = cells[first + at];
    if (cell === null || cell === undefined) return;
    const type = columns.get(name);
    props[name] = type === 'INT64' || type === 'DOUBLE' ? Number(cell) : type === 'BOOLEAN' ? cell === 'true' : cell;
  });
  return props;
}

/** a segment's rows in batches */
async function* segmentRows(segment: Segment): AsyncGenerator<CsvCell[][]> {
  let rows: CsvCell[][] = [];
  const reader = new CsvReader({ unquotedNull: CSV_NULL, maxCellChars: Number.MAX_SAFE_INTEGER }, (cells) => rows.push(cells));
  for await (const text of createReadStream(segment.file, { encoding: 'utf8' })) {
    reader.push(text as string);
    while (rows.length >= BATCH) yield rows.splice(0, BATCH);
  }
  reader.end();
  if (rows.length > 0) yield rows;
  rows = [];
}
