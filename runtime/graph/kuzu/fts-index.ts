/**
 * The full-text index of each node label (over its STRING columns), which
 * `search` queries: built when first searched, rebuilt when the label's
 * string columns changed, and dropped before a large append (the next
 * search rebuilds it once instead of updating it per row).
 */
import type { WriteBatch } from '../batches.js';
import type { KeySets } from './key-sets.js';
import type { GraphSchema } from './schema.js';
import type { KuzuSession } from './session.js';

/** the index's name on every label */
export const FTS_INDEX = 'fts';
/** a COPY of this many new nodes drops the label's full-text index; the next search rebuilds it once instead of updating it per row */
const FTS_DROP_THRESHOLD = 1000;

export class FtsIndexes {
  constructor(
    private readonly session: KuzuSession,
    private readonly schema: GraphSchema,
  ) {}

  /** (re)builds a label's full-text index when its string columns changed since it was built */
  async ensure(label: string): Promise<void> {
    const table = this.schema.tables.get(label)!;
    const wanted = [...table.columns]
      .filter(([, type]) => type === 'STRING')
      .map(([name]) => name)
      .sort();
    if (table.ftsColumns && sameList(table.ftsColumns, wanted)) return;
    await this.drop(label);
    await this.session.exec(`CALL CREATE_FTS_INDEX('${label}', '${FTS_INDEX}', [${wanted.map((column) => `'${column}'`).join(', ')}])`);
    table.ftsColumns = wanted;
  }

  /** the engine drops an index only outside a transaction */
  async drop(label: string): Promise<void> {
    const table = this.schema.tables.get(label);
    if (!table?.ftsColumns) return;
    await this.session.exec(`CALL DROP_FTS_INDEX('${label}', '${FTS_INDEX}')`);
    table.ftsColumns = null;
  }

  /**
   * Labels whose full-text index a node batch drops first: appending this
   * many new nodes one index update at a time costs more than the one
   * rebuild the next search does. New keys are counted with the label's key
   * set when it is loaded; without it, every key counts as new.
   */
  toDropFor(batch: WriteBatch, keySets: KeySets): string[] {
    if (batch.kind !== 'nodes') return [];
    const labels: string[] = [];
    for (const [label, keyed] of batch.byLabel) {
      if (!this.schema.tables.get(label)?.ftsColumns || keyed.size < FTS_DROP_THRESHOLD) continue;
      const known = keySets.loaded(label);
      let fresh = 0;
      for (const key of keyed.keys()) if (!known?.has(key)) fresh += 1;
      if (fresh >= FTS_DROP_THRESHOLD) labels.push(label);
    }
    return labels;
  }
}

function sameList(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && [...left].sort().every((item, index) => item === right[index]);
}
