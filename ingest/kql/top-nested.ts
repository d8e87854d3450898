/**
 * top-nested: a hierarchy of top-N groups. Level k groups the input by the
 * first k `of` expressions, aggregates, and keeps the N best groups within
 * each group kept at level k-1 (all of them without N; `asc` keeps the
 * lowest). Each output row is one kept leaf with its key and aggregate at
 * every level. `with others` is refused.
 */
import { ServiceError } from '../../runtime/errors.js';
import { aggregateSql } from './aggregates.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { scopeOf, valueOf, type OperatorContext } from './operators.js';
import { from, type Column, type Relation } from './relation.js';
import { scalar } from './scalar.js';
import { ident } from './sql-text.js';

interface Level {
  readonly key: string;
  readonly aggregate: KNode;
  readonly count: string | null;
  readonly direction: 'ASC' | 'DESC';
}

function levelOf(clause: KNode, input: Relation, ctx: OperatorContext): Level {
  if (child(clause, 'WithOthersClause')) throw new ServiceError('kql_error', 'top-nested: with others is not supported', { construct: 'TopNestedOperator' });
  const scope = scopeOf(input, ctx);
  const countNode = child(clause, 'Expression');
  let by = child(clause, 'ByExpression') as KNode;
  let direction: Level['direction'] = 'DESC';
  if (kindOf(by) === 'OrderedExpression') {
    const ordering = child(by, 'Ordering');
    const keyword = ordering ? child(ordering, 'AscOrDescKeyword') : null;
    if (keyword && (keyword.Text ?? '').toLowerCase() === 'asc') direction = 'ASC';
    by = child(by, 'Expression') as KNode;
  }
  return {
    key: scalar(valueOf(child(clause, 'OfExpression') as KNode), scope),
    aggregate: by,
    count: countNode ? scalar(countNode, scope) : null,
    direction,
  };
}

export function topNested(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const levels = children(node, 'Clauses').map((clause) => levelOf(clause, input, ctx));
  const inputTypes = new Map(input.columns.map((column) => [column.name, column.type]));
  const keyName = (index: number): string => ident(`__k${index}`);
  const aggName = (index: number): string => ident(`__a${index}`);
  let kept: Relation | null = null;
  levels.forEach((level, index) => {
    const keys = levels.slice(0, index + 1).map((item, position) => `${item.key} AS ${keyName(position)}`);
    const [aggregate] = aggregateSql(level.aggregate, { scope: scopeOf(input, ctx), ordered: input.ordered, inputTypes }, [`__a${index}`]);
    const groups = keys.map((_, position) => String(position + 1)).join(', ');
    const grouped = `SELECT ${keys.join(', ')}, ${aggregate as string} AS ${aggName(index)} FROM ${from(input)} GROUP BY ${groups}`;
    const parents = levels.slice(0, index).map((_, position) => `g.${keyName(position)}`);
    const rank = `row_number() OVER (${parents.length ? `PARTITION BY ${parents.join(', ')} ` : ''}ORDER BY g.${aggName(index)} ${level.direction} NULLS LAST)`;
    const carried = levels.slice(0, index).map((_, position) => `p.${aggName(position)}`);
    const select = [...levels.slice(0, index + 1).map((_, position) => `g.${keyName(position)}`), ...carried, `g.${aggName(index)}`];
    const join = kept
      ? ` JOIN ${from(kept)} p ON ${parents.map((parent, position) => `${parent} IS NOT DISTINCT FROM p.${keyName(position)}`).join(' AND ')}`
      : '';
    const limit = level.count ? ` QUALIFY ${rank} <= ${level.count}` : '';
    kept = ctx.chain.add(`SELECT ${select.join(', ')} FROM (${grouped}) g${join}${limit}`, [], false);
  });
  if (!kept) throw new ServiceError('kql_error', 'top-nested needs a clause');
  const list = output.map((column, index) => `${index % 2 === 0 ? keyName(index / 2) : aggName((index - 1) / 2)} AS ${ident(column.name)}`);
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(kept)}`, output, false);
}
