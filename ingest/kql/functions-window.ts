/** Kusto's window functions (row_number, prev, next, row_cumsum, row_rank_*) over the serialized input. */
import type { Call, Translate } from './call.js';
import { kindOf, type KNode } from './kusto.js';
import { ORD } from './relation.js';
import { typeOf, unsupported } from './scalar.js';
import { duckType, ident } from './sql-text.js';

/** Window functions over the serialized input: its `__ord` order, optionally restarting where `restart` holds. */
function over(c: Call, restartIndex: number | null): string {
  const order = c.scope.ordered ? `ORDER BY ${ident(ORD)}` : '';
  const restart = restartIndex !== null ? c.args[restartIndex] : undefined;
  if (!restart || kindOf(restart) === 'BooleanLiteralExpression') return `OVER (${order})`;
  const pre = c.scope.pre;
  if (!pre) throw unsupported(c.node, 'window restart here');
  const flag = pre(`coalesce(${c.arg(restartIndex as number)}, FALSE)`);
  const group = pre(`sum(CASE WHEN ${flag} THEN 1 ELSE 0 END) OVER (${order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`);
  return `OVER (PARTITION BY ${group} ${order})`;
}

const cumulative = (window: string): string => window.replace(/\)$/, ' ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)');

/** row_rank_dense / row_rank_min: ranks that move when the term differs from the previous row's. */
function rowRank(c: Call, dense: boolean): string {
  const pre = c.scope.pre;
  if (!pre) throw unsupported(c.node, 'row_rank here');
  const window = over(c, 1);
  const term = typeOf(c.args[0] as KNode) === 'dynamic' ? `CAST(${c.arg(0)} AS VARCHAR)` : c.arg(0);
  const changed = pre(`coalesce(${term} IS DISTINCT FROM lag(${term}) ${window}, TRUE) OR row_number() ${window} = 1`);
  if (dense) return `CAST(sum(CASE WHEN ${changed} THEN 1 ELSE 0 END) ${cumulative(window)} AS BIGINT)`;
  const number = pre(`row_number() ${window}`);
  return `CAST(max(CASE WHEN ${changed} THEN ${number} END) ${cumulative(window)} AS BIGINT)`;
}

export const WINDOW_FUNCTIONS: Record<string, Translate> = {
  row_number: (c) => `CAST(row_number() ${over(c, 1)} + ${c.args.length ? c.arg(0) : '1'} - 1 AS BIGINT)`,
  prev: (c) => `lag(${c.arg(0)}, ${c.args.length > 1 ? c.arg(1) : '1'}${c.args.length > 2 ? `, ${c.as(2, c.type)}` : ''}) ${over(c, null)}`,
  next: (c) => `lead(${c.arg(0)}, ${c.args.length > 1 ? c.arg(1) : '1'}${c.args.length > 2 ? `, ${c.as(2, c.type)}` : ''}) ${over(c, null)}`,
  row_cumsum: (c) => `CAST(sum(${c.arg(0)}) ${cumulative(over(c, 1))} AS ${duckType(c.type)})`,
  row_rank_dense: (c) => rowRank(c, true),
  row_rank_min: (c) => rowRank(c, false),
};
