/**
 * partition by Column (subquery): the subquery runs on the rows of each value
 * of the column, and the results are unioned. In SQL, one LATERAL subquery per
 * distinct value: the subquery's operators are translated as usual onto the
 * partition's rows (a CTE filtered by the outer value), then their CTEs move
 * into the LATERAL's own WITH, so they can read that outer value. The chain
 * keeps an unused placeholder under each moved name, so names stay unique.
 */
import { ServiceError } from '../../runtime/errors.js';
import { operator } from './dispatch.js';
import { child, columnsOf, kindOf, type KNode } from './kusto.js';
import { from, selectList, type Column, type Relation } from './relation.js';
import { ident } from './sql-text.js';
import type { Translator } from './translate.js';

const PART = ident('__part');
const KEY = ident('__pk');

/** The subquery's operators, left to right, applied to `input`. */
function pipeline(translator: Translator, node: KNode, input: Relation): Relation {
  switch (kindOf(node)) {
    case 'PipeExpression': {
      const left = pipeline(translator, child(node, 'Expression') as KNode, input);
      return operator(translator, child(node, 'Operator') as KNode, left, columnsOf(node.ResultType));
    }
    case 'ParenthesizedExpression':
      return pipeline(translator, child(node, 'Expression') as KNode, input);
    default:
      return operator(translator, node, input, columnsOf(node.ResultType));
  }
}

export function partition(translator: Translator, node: KNode, input: Relation, output: Column[]): Relation {
  const operand = child(node, 'Operand');
  if (!operand || kindOf(operand) !== 'PartitionSubquery' || child(node, 'Scope'))
    throw new ServiceError('kql_error', 'partition: only the form `partition by Column (operators)` is supported');
  const by = child(node, 'ByExpression') as KNode;
  const key = (by as unknown as { SimpleName?: string }).SimpleName;
  if (kindOf(by) !== 'NameReference' || !key || !input.columns.some((column) => column.name === key))
    throw new ServiceError('kql_error', 'partition: partition by a column of the input');
  const chain = translator.chain;
  const start = chain.ctes.length;
  const rows = chain.add(
    `SELECT ${selectList(input)} FROM ${from(input)} WHERE ${ident(key)} IS NOT DISTINCT FROM ${PART}.${KEY}`,
    input.columns,
    input.ordered,
  );
  const result = pipeline(translator, child(operand, 'Subquery') as KNode, rows);
  const inner = chain.ctes.splice(start);
  inner.forEach((_, index) => chain.ctes.push(`${ident(`_q${start + index}`)} AS (SELECT 1)`));
  const list = output.map((column) => ident(column.name)).join(', ') || 'NULL AS "__empty"';
  const lateral = `LATERAL (WITH ${inner.join(', ')} SELECT ${list} FROM ${from(result)}) AS ${ident('__rows')}`;
  return chain.add(`SELECT ${list} FROM (SELECT DISTINCT ${ident(key)} AS ${KEY} FROM ${from(input)}) AS ${PART}, ${lateral}`, output, false);
}
