/**
 * mv-apply: each input record's arrays (or bags) expanded into a small table,
 * the subquery run on that table, and its rows joined back to the record.
 * In SQL every record gets a number (`__row`), the expansion carries it, and
 * the subquery's operators run with it as an extra column: row-wise ones
 * (where, extend, project*) as usual, summarize and take per `__row`. Other
 * operators inside the subquery are refused with `kql_error`.
 * Known gap: a record whose subtable is empty gives no row, also under a
 * summarize without `by` (Kusto gives one row of empty aggregates).
 */
import { ServiceError } from '../../runtime/errors.js';
import { aggregateSql } from './aggregates.js';
import { child, children, columnsOf, kindOf, type KNode } from './kusto.js';
import { declaredName, extend, project, scopeOf, valueOf, where, type OperatorContext } from './operators.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, toDynamic, typeOf } from './scalar.js';
import { ident } from './sql-text.js';

const ROW: Column = { name: '__row', type: 'long' };
const ROW_SQL = ident(ROW.name);

/** The items mv-apply iterates for one value: array elements, bag entries as one-key bags; none for null or []. */
const itemsOf = (json: string): string =>
  `CASE WHEN ${json} IS NULL THEN CAST([] AS JSON[]) WHEN json_type(${json}) = 'ARRAY' THEN CAST(json_extract(${json}, '$[*]') AS JSON[]) WHEN json_type(${json}) = 'OBJECT' THEN list_transform(json_keys(${json}), k -> json_object(k, json_extract(${json}, '$."' || k || '"'))) ELSE [${json}] END`;

interface Expanded {
  readonly name: string;
  readonly type: string;
  readonly list: string;
}

function expandedItems(node: KNode, input: Relation, ctx: OperatorContext): Expanded[] {
  const scope = scopeOf(input, ctx);
  return children(node, 'Expressions').map((item) => {
    const named = child(item, 'Expression') as KNode;
    const value = valueOf(named);
    const name = declaredName(named) ?? (value as unknown as { SimpleName?: string }).SimpleName;
    if (!name) throw new ServiceError('kql_error', 'mv-apply: name the expanded column (x = expression)');
    const toTypeOf = child(item, 'ToTypeOf');
    const typeNode = toTypeOf ? children(child(toTypeOf, 'TypeOf') as KNode, 'Types')[0] : undefined;
    const type = typeNode ? typeNode.ToString().trim() : 'dynamic';
    return { name, type, list: itemsOf(toDynamic(scalar(value, scope), typeOf(value))) };
  });
}

function parameterName(node: KNode, keyword: string): string | null {
  for (const parameter of children(node, 'Parameters')) {
    const name = (child(parameter, 'Name') as KNode).ToString().trim();
    if (name !== keyword) throw new ServiceError('kql_error', `mv-apply: unsupported parameter ${name}`);
    return (child(parameter, 'Expression') as KNode).ToString().trim();
  }
  return null;
}

/** summarize inside the subquery: grouped by the record's number as well. */
function summarizePerRow(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const output = columnsOf(node.ResultType);
  const scope = scopeOf(input, ctx);
  const byClause = child(node, 'ByClause');
  const by = byClause ? children(byClause, 'Expressions') : [];
  const select = [ROW_SQL, ...by.map((expression, index) => `${scalar(valueOf(expression), scope)} AS ${ident((output[index] as Column).name)}`)];
  const inputTypes = new Map(input.columns.map((column) => [column.name, column.type]));
  children(node, 'Aggregates').forEach((aggregate, index) => {
    const name = (output[by.length + index] as Column).name;
    const sqls = aggregateSql(aggregate, { scope, ordered: input.ordered, inputTypes }, [name]);
    if (sqls.length !== 1) throw new ServiceError('kql_error', 'mv-apply: this aggregate is not supported inside the subquery');
    select.push(`${sqls[0] as string} AS ${ident(name)}`);
  });
  const groups = select.map((_, index) => String(index + 1)).slice(0, by.length + 1);
  return ctx.chain.add(`SELECT ${select.join(', ')} FROM ${from(input)} GROUP BY ${groups.join(', ')}`, [...output, ROW], false);
}

function subquery(node: KNode, expanded: Relation, ctx: OperatorContext): Relation {
  if (kindOf(node) === 'PipeExpression') return apply(child(node, 'Operator') as KNode, subquery(child(node, 'Expression') as KNode, expanded, ctx), ctx);
  if (kindOf(node) === 'ParenthesizedExpression') return subquery(child(node, 'Expression') as KNode, expanded, ctx);
  return apply(node, expanded, ctx);
}

function apply(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const output = [...columnsOf(node.ResultType), ROW];
  switch (kindOf(node)) {
    case 'FilterOperator':
      return where(node, input, ctx);
    case 'ExtendOperator':
      return extend(node, input, ctx, output);
    case 'ProjectOperator':
    case 'ProjectAwayOperator':
    case 'ProjectKeepOperator':
    case 'ProjectRenameOperator':
    case 'ProjectReorderOperator':
      return project(node, input, ctx, output);
    case 'SummarizeOperator':
      return summarizePerRow(node, input, ctx);
    case 'TakeOperator': {
      const count = scalar(child(node, 'Expression') as KNode, scopeOf(input, ctx));
      const order = input.ordered ? ` ORDER BY ${ident(ORD)}` : '';
      return ctx.chain.add(
        `SELECT * FROM ${from(input)} QUALIFY row_number() OVER (PARTITION BY ${ROW_SQL}${order}) <= ${count}`,
        input.columns,
        input.ordered,
      );
    }
    default:
      throw new ServiceError('kql_error', `mv-apply: ${kindOf(node)} is not supported inside the subquery`, { construct: kindOf(node) });
  }
}

export function mvApply(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const numbered = ctx.chain.add(
    `SELECT *, row_number() OVER (${input.ordered ? `ORDER BY ${ident(ORD)}` : ''}) AS ${ROW_SQL} FROM ${from(input)}`,
    [...input.columns, ROW],
    false,
  );
  const items = expandedItems(node, input, ctx);
  const index = parameterName(node, 'with_itemindex');
  const limitClause = child(node, 'RowLimitClause');
  const limit = limitClause ? scalar(child(limitClause, 'RowLimit') as KNode, scopeOf(input, ctx)) : null;
  const names = new Set(items.map((item) => item.name));
  const kept = input.columns.filter((column) => !names.has(column.name));
  const longest = items.map((item) => `len(${item.list})`).join(', ');
  const unnested = ctx.chain.add(
    `SELECT ${[...kept.map((column) => ident(column.name)), ...items.map((item) => `unnest(${item.list}) AS ${ident(item.name)}`), `unnest(generate_series(0, greatest(${longest}) - 1)) AS "__i"`, ROW_SQL].join(', ')} FROM ${from(numbered)}`,
    [],
    false,
  );
  const columns: Column[] = [...kept, ...items.map((item) => ({ name: item.name, type: item.type })), ...(index ? [{ name: index, type: 'long' }] : []), ROW];
  const list = [
    ...kept.map((column) => ident(column.name)),
    ...items.map((item) => `${fromDynamic(ident(item.name), item.type)} AS ${ident(item.name)}`),
    ...(index ? [`"__i" AS ${ident(index)}`] : []),
    ROW_SQL,
    `row_number() OVER (ORDER BY ${ROW_SQL}, "__i") AS ${ident(ORD)}`,
  ];
  const expanded = ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(unnested)}${limit ? ` WHERE "__i" < ${limit}` : ''}`, columns, true);
  const result = subquery(child(child(node, 'Subquery') as KNode, 'Expression') as KNode, expanded, ctx);
  const fromResult = new Set(result.columns.map((column) => column.name));
  const select = output.map((column) => `${fromResult.has(column.name) ? 'r' : 'n'}.${ident(column.name)} AS ${ident(column.name)}`);
  const order = `ORDER BY n.${ROW_SQL}${result.ordered ? `, r.${ident(ORD)}` : ''}`;
  // records keep their order and each one's subquery rows theirs (make_list after mv-apply sees them so)
  select.push(`row_number() OVER (${order}) AS ${ident(ORD)}`);
  return ctx.chain.add(`SELECT ${select.join(', ')} FROM ${from(numbered)} n JOIN ${from(result)} r ON n.${ROW_SQL} = r.${ROW_SQL}`, output, true);
}
