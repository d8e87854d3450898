/**
 * Rows as list-parameter Cypher: updates of the properties a batch gives,
 * and inserts CSV cannot carry (see csv.ts). Rows are grouped by the
 * properties they set, so a property a row does not give keeps its stored
 * value.
 */
import type { Edge, EdgeGroup, Properties } from '../batches.js';
import { KEY_PROPERTY, quote } from '../names.js';
import { toColumnText, type ColumnType } from '../values.js';
import type { Row } from './engine.js';
import type { Statement } from './session.js';

type Columns = ReadonlyMap<string, ColumnType>;

/** a label's rows as list-parameter statements: inserts (a COPY, when CSV cannot carry them) or updates of the given properties */
export function nodeRowStatements(label: string, rows: readonly Properties[], columns: Columns, mode: 'insert' | 'update'): Statement[] {
  return bySignature(rows, (props) => props, columns).map((group) => {
    const encoded = group.rows.map((props) => encodeRow(label, props, group.names, columns, { k: props[KEY_PROPERTY] as string }));
    if (mode === 'insert') {
      const names = [KEY_PROPERTY, ...group.names].map(quote).join(', ');
      const values = group.names.map((name, at) => `, CAST(r.p${at} AS ${columns.get(name)!})`).join('');
      return { text: `COPY ${quote(label)}(${names}) FROM (UNWIND $rows AS r RETURN r.k${values})`, rows: encoded };
    }
    const sets = group.names.map((name, at) => `n.${quote(name)} = CAST(r.p${at} AS ${columns.get(name)!})`);
    return { text: `UNWIND $rows AS r MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: r.k}) SET ${sets.join(', ')}`, rows: encoded };
  });
}

/** a group's relationships as list-parameter statements: inserts (a COPY, when CSV cannot carry them) or updates of the given properties */
export function edgeRowStatements(group: EdgeGroup, edges: readonly Edge[], columns: Columns, mode: 'insert' | 'update'): Statement[] {
  return bySignature(edges, (edge) => edge.props, columns).map((part) => {
    const encoded = part.rows.map((edge) => encodeRow(group.type, edge.props, part.names, columns, { f: edge.f, t: edge.t }));
    if (mode === 'insert') {
      const names = [...columns.keys()];
      const values = names.map((name) => `, CAST(${part.names.includes(name) ? `r.p${part.names.indexOf(name)}` : 'NULL'} AS ${columns.get(name)!})`).join('');
      return {
        text: `${relCopyTarget(group, names)} FROM (UNWIND $rows AS r RETURN r.f, r.t${values}) (from='${group.from}', to='${group.to}')`,
        rows: encoded,
      };
    }
    const sets = part.names.map((name, at) => `x.${quote(name)} = CAST(r.p${at} AS ${columns.get(name)!})`);
    return {
      text:
        `UNWIND $rows AS r MATCH (a:${quote(group.from)} {${quote(KEY_PROPERTY)}: r.f})-[x:${quote(group.type)}]->(b:${quote(group.to)}) ` +
        `WHERE b.${quote(KEY_PROPERTY)} = r.t SET ${sets.join(', ')}`,
      rows: encoded,
    };
  });
}

/** `COPY Type(columns)`: every property column is listed (a rel COPY without a column list wants them all) */
export function relCopyTarget(group: EdgeGroup, names: readonly string[]): string {
  return `COPY ${quote(group.type)}${names.length ? `(${names.map(quote).join(', ')})` : ''}`;
}

/** rows grouped by the properties they set (a property a row does not give keeps its stored value) */
function bySignature<R>(rows: readonly R[], propsOf: (row: R) => Properties, columns: Columns): { names: string[]; rows: R[] }[] {
  const groups = new Map<string, { names: string[]; rows: R[] }>();
  for (const row of rows) {
    const names = Object.keys(propsOf(row))
      .filter((name) => name !== KEY_PROPERTY && columns.has(name))
      .sort();
    const signature = names.join(',');
    const group = groups.get(signature) ?? { names, rows: [] };
    groups.set(signature, group);
    group.rows.push(row);
  }
  return [...groups.values()];
}

function encodeRow(table: string, props: Properties, names: readonly string[], columns: Columns, base: Row): Row {
  const encoded: Row = { ...base };
  names.forEach((name, at) => {
    encoded[`p${at}`] = toColumnText(props[name], columns.get(name)!, table, name);
  });
  return encoded;
}
