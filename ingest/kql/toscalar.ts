/**
 * toscalar(tabular): the first column of the first row, as a scalar subquery
 * over the tabular expression's CTE (Kusto computes it once per query; DuckDB
 * plans an uncorrelated subquery once too). No row: null.
 */
import { child, columnsOf, type KNode } from './kusto.js';
import { from, ORD } from './relation.js';
import { scalar, unsupported, type ScalarScope } from './scalar.js';
import { ident } from './sql-text.js';

export function toScalar(node: KNode, scope: ScalarScope): string {
  const expression = child(node, 'Expression') as KNode;
  // toscalar(1): a scalar argument is its own value
  if (columnsOf(expression.ResultType).length === 0 && (expression.ResultType as { Columns?: unknown } | null)?.Columns === undefined)
    return scalar(expression, scope);
  if (!scope.tabular) throw unsupported(node, 'toscalar here');
  const relation = scope.tabular(expression);
  const first = relation.columns[0];
  if (!first) throw unsupported(node, 'toscalar of a table without columns');
  const order = relation.ordered ? ` ORDER BY ${ident(ORD)}` : '';
  return `(SELECT ${ident(first.name)} FROM ${from(relation)}${order} LIMIT 1)`;
}
