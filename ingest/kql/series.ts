/**
 * make-series: one row per `by` group with one dynamic array per aggregate
 * (a value per bin of the axis, `default` where a bin has no rows) and the
 * axis itself as an array. Bins run from `from` (or the first bin holding
 * data) by `step` up to `to` (exclusive; or past the last bin holding data);
 * an empty range gives no rows.
 */
import { ServiceError } from '../../runtime/errors.js';
import { aggregateSql } from './aggregates.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { scopeOf, valueOf, type OperatorContext } from './operators.js';
import { from, type Column, type Relation } from './relation.js';
import { scalar, toDynamic, typeOf } from './scalar.js';
import { duckType, ident } from './sql-text.js';

export function makeSeries(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const aggregates = children(node, 'Aggregates');
  const byClause = child(node, 'ByClause');
  const by = byClause ? children(byClause, 'Expressions') : [];
  const onClause = child(node, 'OnClause');
  const axisNode = onClause ? (child(onClause, 'Expression') as KNode) : null;
  if (!axisNode) throw new ServiceError('kql_error', 'make-series needs an on clause');
  const axisType = typeOf(axisNode);
  const isTime = axisType === 'datetime';
  const axisValue = scalar(axisNode, scope);
  const axis = isTime ? `epoch_us(${axisValue})` : axisValue;
  const range = child(node, 'RangeClause');
  let fromSql: string | null = null;
  let toSql: string | null = null;
  let stepSql: string | null = null;
  if (range && kindOf(range) === 'MakeSeriesFromToStepClause') {
    const part = (name: string): string | null => {
      const clause = child(range, name);
      const expression = clause ? child(clause, 'Expression') : null;
      return expression ? scalar(expression, scope) : null;
    };
    fromSql = part('MakeSeriesFromClause');
    toSql = part('MakeSeriesToClause');
    stepSql = part('MakeSeriesStepClause');
  } else if (range && kindOf(range) === 'MakeSeriesInRangeClause') {
    const list = children(child(range, 'Arguments') as KNode, 'Expressions').map((argument) => scalar(argument, scope));
    fromSql = list[0] ?? null;
    toSql = list[1] ?? null;
    stepSql = list[2] ?? null;
  }
  if (!stepSql) throw new ServiceError('kql_error', 'make-series needs a step');
  const step = isTime ? `CAST(${stepSql} // 10 AS BIGINT)` : stepSql;
  const source = from(input);
  const first = fromSql
    ? isTime
      ? `epoch_us(${fromSql})`
      : fromSql
    : isTime
      ? `(SELECT floor((min(${axis}) + 62135596800000000) / ${step}) * ${step} - 62135596800000000 FROM ${source})`
      : `(SELECT floor(min(${axis}) / ${step}) * ${step} FROM ${source})`;
  const last = toSql
    ? isTime
      ? `epoch_us(${toSql})`
      : toSql
    : `(${first} + (floor(((SELECT max(${axis}) FROM ${source}) - ${first}) / ${step}) + 1) * ${step})`;
  const count = `CAST(greatest(ceil((${last} - ${first}) / ${step}), 0) AS BIGINT)`;
  const bin = `CAST(floor((${axis} - ${first}) / ${step}) AS BIGINT)`;

  const byNames = output.slice(0, by.length).map((column) => column.name);
  const bySql = by.map((expression) => scalar(valueOf(expression), scope));
  const inputTypes = new Map(input.columns.map((column) => [column.name, column.type]));
  const aggSql: string[] = [];
  const defaults: string[] = [];
  aggregates.forEach((aggregate, index) => {
    const expression = child(aggregate, 'Expression') as KNode;
    const call = valueOf(expression);
    const name = `__a${index}`;
    const [sql] = aggregateSql(expression, { scope, ordered: false, inputTypes }, [name]);
    aggSql.push(`${sql as string} AS ${ident(name)}`);
    const defaultClause = child(aggregate, 'DefaultExpression');
    const value = defaultClause ? child(defaultClause, 'Expression') : null;
    const type = typeOf(call);
    defaults.push(value ? `CAST(${scalar(value, scope)} AS ${duckType(type)})` : `CAST(0 AS ${duckType(type)})`);
  });
  const groupKeys = bySql.map((sql, index) => `${sql} AS ${ident(`__b${index}`)}`);
  const groups = by.length ? `(SELECT DISTINCT ${groupKeys.join(', ')} FROM ${source})` : '(SELECT 1 AS "__one")';
  const aggregated = `(SELECT ${[...groupKeys, `${bin} AS "__k"`, ...aggSql].join(', ')} FROM ${source} WHERE ${axis} >= ${first} AND ${axis} < ${last} GROUP BY ALL)`;
  const grid = `(SELECT generate_series AS "__k" FROM generate_series(0, ${count} - 1))`;
  const joinOn = [...by.map((_, index) => `g.${ident(`__b${index}`)} IS NOT DISTINCT FROM a.${ident(`__b${index}`)}`), 'grid."__k" = a."__k"'];
  const axisAt = isTime ? `make_timestamp(CAST(${first} + grid."__k" * ${step} AS BIGINT))` : `(${first} + grid."__k" * ${step})`;
  const select = [
    ...byNames.map((name, index) => `g.${ident(`__b${index}`)} AS ${ident(name)}`),
    ...aggregates.map((aggregate, index) => {
      const type = typeOf(valueOf(child(aggregate, 'Expression') as KNode));
      const value = toDynamic(`coalesce(a.${ident(`__a${index}`)}, ${defaults[index] as string})`, type);
      return `coalesce(to_json(list(${value} ORDER BY grid."__k") FILTER (WHERE grid."__k" IS NOT NULL)), CAST('[]' AS JSON)) AS ${ident((output[by.length + index] as Column).name)}`;
    }),
    `coalesce(to_json(list(${toDynamic(axisAt, axisType)} ORDER BY grid."__k") FILTER (WHERE grid."__k" IS NOT NULL)), CAST('[]' AS JSON)) AS ${ident((output[by.length + aggregates.length] as Column).name)}`,
  ];
  const groupBy = by.length ? ` GROUP BY ${by.map((_, index) => `g.${ident(`__b${index}`)}`).join(', ')}` : '';
  return ctx.chain.add(
    `SELECT ${select.join(', ')} FROM ${groups} g LEFT JOIN ${grid} grid ON TRUE LEFT JOIN ${aggregated} a ON ${joinOn.join(' AND ')}${groupBy} HAVING count(grid."__k") > 0`,
    output,
    false,
  );
}
