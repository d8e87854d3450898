/** Tabular sources: datatable, print, range. */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, columnsOf, kindOf, type KNode } from './kusto.js';
import { CteChain, ORD, type Relation } from './relation.js';
import { fromDynamic, scalar, toDynamic, typeOf, type ScalarScope } from './scalar.js';
import { duckType, ident } from './sql-text.js';

/** Cast a value to the column's type (datatable cells, unions). */
export function coerce(sql: string, from: string, to: string): string {
  if (from === to) return sql;
  if (from === 'dynamic') return fromDynamic(sql, to);
  if (to === 'dynamic') return toDynamic(sql, from);
  return `CAST(${sql} AS ${duckType(to)})`;
}

export function dataTable(node: KNode, chain: CteChain, lets: ScalarScope['lets']): Relation {
  const columns = columnsOf(node.ResultType);
  const values = children(node, 'Values');
  const width = columns.length;
  if (width === 0) throw new ServiceError('kql_error', 'datatable needs columns');
  const scope: ScalarScope = { columns: new Set(), lets };
  const rows: string[] = [];
  for (let start = 0; start + width <= values.length; start += width) {
    const cells = columns.map((column, index) => {
      const cell = values[start + index] as KNode;
      return `${coerce(scalar(cell, scope), typeOf(cell), column.type)} AS ${ident(column.name)}`;
    });
    rows.push(`SELECT ${cells.join(', ')}, ${rows.length} AS ${ident(ORD)}`);
  }
  if (rows.length === 0) {
    const empty = columns.map((column) => `CAST(NULL AS ${duckType(column.type)}) AS ${ident(column.name)}`);
    rows.push(`SELECT ${empty.join(', ')}, 0 AS ${ident(ORD)} WHERE FALSE`);
  }
  return chain.add(rows.join(' UNION ALL '), columns, true);
}

export function print(node: KNode, chain: CteChain, lets: ScalarScope['lets'], tabular?: ScalarScope['tabular']): Relation {
  const columns = columnsOf(node.ResultType);
  const expressions = children(node, 'Expressions');
  const scope: ScalarScope = { columns: new Set(), lets, tabular };
  const list = expressions.map((expression, index) => {
    const column = columns[index];
    if (!column) throw new ServiceError('kql_error', 'print: column count mismatch');
    const inner = kindOf(expression) === 'SimpleNamedExpression' ? (child(expression, 'Expression') as KNode) : expression;
    return `${scalar(inner, scope)} AS ${ident(column.name)}`;
  });
  return chain.add(`SELECT ${list.join(', ')}`, columns, false);
}

export function range(node: KNode, chain: CteChain, lets: ScalarScope['lets']): Relation {
  const columns = columnsOf(node.ResultType);
  const column = columns[0] as { name: string; type: string };
  const scope: ScalarScope = { columns: new Set(), lets };
  const fromNode = child(node, 'From') as KNode;
  const first = scalar(fromNode, scope);
  const last = scalar(child(node, 'To') as KNode, scope);
  const step = scalar(child(node, 'Step') as KNode, scope);
  if (column.type === 'datetime') {
    return chain.add(
      `SELECT CAST(generate_series AS TIMESTAMP) AS ${ident(column.name)} FROM generate_series(${first}, ${last}, to_microseconds(CAST(${step} // 10 AS BIGINT)))`,
      columns,
      false,
    );
  }
  const type = duckType(column.type);
  return chain.add(
    `SELECT CAST(generate_series AS ${type}) AS ${ident(column.name)} FROM generate_series(CAST(${first} AS ${type === 'DOUBLE' ? 'DOUBLE' : 'BIGINT'}), ${last}, ${step})`,
    columns,
    false,
  );
}
