/** The relations the translator chains: one CTE per operator, with Kusto column names and types. */
import { ident } from './sql-text.js';

export interface Column {
  readonly name: string;
  /** Kusto scalar type name */
  readonly type: string;
}

export interface Relation {
  /** the CTE's name */
  readonly name: string;
  readonly columns: readonly Column[];
  /** carries the hidden `__ord` column: the row order Kusto keeps (after sort, top, serialize, datatable) */
  readonly ordered: boolean;
}

export const ORD = '__ord';

export class CteChain {
  readonly ctes: string[] = [];

  add(select: string, columns: readonly Column[], ordered: boolean): Relation {
    const name = `_q${this.ctes.length}`;
    this.ctes.push(`${ident(name)} AS (${select})`);
    return { name, columns, ordered };
  }
}

/** The select list of `columns` (plus `__ord` when the relation carries it). */
export function selectList(relation: Relation, columns: readonly Column[] = relation.columns): string {
  const list = columns.map((column) => ident(column.name));
  if (relation.ordered) list.push(ident(ORD));
  return list.join(', ') || 'NULL AS "__empty"';
}

export const from = (relation: Relation): string => ident(relation.name);
