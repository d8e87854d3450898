/**
 * Row-shaping operators: where, project (-away, -rename, -keep, -reorder),
 * extend, summarize, take, sort, top, count, distinct, serialize. Output
 * columns are the analyzer's (`ResultType`), so names such as `count_` and
 * `sum_x` are Kusto's own.
 */
import { ServiceError } from '../../runtime/errors.js';
import { aggregateCall, aggregateName, aggregateSql } from './aggregates.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { CteChain, from, ORD, selectList, type Column, type Relation } from './relation.js';
import { scalar, typeOf, type ScalarScope } from './scalar.js';
import { ident } from './sql-text.js';

export interface OperatorContext {
  readonly chain: CteChain;
  readonly lets: ScalarScope['lets'];
  readonly tabular?: ScalarScope['tabular'];
}

export const scopeOf = (input: Relation, ctx: OperatorContext): ScalarScope => ({
  columns: new Set(input.columns.map((column) => column.name)),
  lets: ctx.lets,
  tabular: ctx.tabular,
  ordered: input.ordered,
});

/** A scope whose expressions may add helper columns (windows over windows); `relation()` is the input with them. */
function windowScope(input: Relation, ctx: OperatorContext): { scope: ScalarScope; relation: () => Relation } {
  let current = input;
  const scope: ScalarScope = {
    ...scopeOf(input, ctx),
    pre: (sql) => {
      const name = ident(`__p${ctx.chain.ctes.length}`);
      current = ctx.chain.add(`SELECT *, ${sql} AS ${name} FROM ${from(current)}`, current.columns, current.ordered);
      return name;
    },
  };
  return { scope, relation: () => current };
}

/** `name = expr` or `expr`: the expression part. */
export const valueOf = (node: KNode): KNode => (kindOf(node) === 'SimpleNamedExpression' ? (child(node, 'Expression') as KNode) : node);

export const declaredName = (node: KNode): string | null =>
  kindOf(node) === 'SimpleNamedExpression' ? ((child(child(node, 'Name') as KNode, 'SimpleName') as unknown as string) ?? null) : null;

const ordCarry = (input: Relation): string => (input.ordered ? `, ${ident(ORD)}` : '');

export function where(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const window = windowScope(input, ctx);
  const condition = scalar(child(node, 'Condition') as KNode, window.scope);
  return ctx.chain.add(`SELECT ${selectList(input)} FROM ${from(window.relation())} WHERE ${condition}`, input.columns, input.ordered);
}

/** project / project-away / -keep / -reorder / -rename: every output column is an input column or an expression. */
export function project(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const kind = kindOf(node);
  const window = windowScope(input, ctx);
  const scope = window.scope;
  const computed = new Map<string, string>();
  if (kind === 'ProjectOperator' || kind === 'ProjectRenameOperator') {
    const expressions = children(node, 'Expressions');
    expressions.forEach((expression, index) => {
      const name = declaredName(expression) ?? (kind === 'ProjectOperator' ? output[index]?.name : null);
      if (name) computed.set(name, scalar(valueOf(expression), scope));
    });
  }
  const list = output.map((column) => `${computed.get(column.name) ?? ident(column.name)} AS ${ident(column.name)}`);
  return ctx.chain.add(`SELECT ${list.join(', ') || 'NULL AS "__empty"'}${ordCarry(input)} FROM ${from(window.relation())}`, output, input.ordered);
}

/** extend: one CTE per expression, so later expressions see earlier ones. */
export function extend(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  let current = input;
  const known = new Set(input.columns.map((column) => column.name));
  const fresh = output.filter((column) => !known.has(column.name));
  let unnamed = 0;
  for (const expression of children(node, 'Expressions')) {
    const name = declaredName(expression) ?? fresh[unnamed++]?.name;
    if (!name) throw new ServiceError('kql_error', 'extend: cannot name a column');
    const window = windowScope(current, ctx);
    const sql = scalar(valueOf(expression), window.scope);
    const type = typeOf(valueOf(expression));
    const exists = current.columns.some((column) => column.name === name);
    const columns = exists ? current.columns.map((column) => (column.name === name ? { name, type } : column)) : [...current.columns, { name, type }];
    const list = columns.map((column) => (column.name === name ? `${sql} AS ${ident(name)}` : ident(column.name)));
    current = ctx.chain.add(`SELECT ${list.join(', ')}${ordCarry(current)} FROM ${from(window.relation())}`, columns, current.ordered);
  }
  return {
    ...current,
    columns: output.map((column) => ({ name: column.name, type: current.columns.find((c) => c.name === column.name)?.type ?? column.type })),
  };
}

export function summarize(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const byClause = child(node, 'ByClause');
  const by = byClause ? children(byClause, 'Expressions') : [];
  const aggregates = children(node, 'Aggregates');
  const select: string[] = [];
  const groups: string[] = [];
  by.forEach((expression, index) => {
    const column = output[index] as Column;
    const value = valueOf(expression);
    const sql = scalar(value, scope);
    select.push(`${sql} AS ${ident(column.name)}`);
    groups.push(String(index + 1));
  });
  let position = by.length;
  // arg_max/arg_min make one column per argument, or with `*` a share of the columns left
  const widths = aggregates.map((aggregate) => {
    const call = aggregateCall(aggregate);
    if (!['arg_max', 'arg_min'].includes(aggregateName(call))) return 1;
    const args = children(child(call, 'ArgumentList') as KNode, 'Expressions');
    return args.some((arg) => kindOf(arg) === 'StarExpression') ? -1 : args.length;
  });
  const flexible = widths.filter((width) => width < 0).length;
  const fixed = widths.filter((width) => width > 0).reduce((sum, width) => sum + width, 0);
  const spare = flexible ? (output.length - by.length - fixed) / flexible : 0;
  const inputTypes = new Map(input.columns.map((column) => [column.name, column.type]));
  // ties go to the first row: arg_max/arg_min need the input's order
  let source = input;
  if (widths.some((width) => width !== 1) && !input.ordered)
    source = ctx.chain.add(`SELECT *, row_number() OVER () AS ${ident(ORD)} FROM ${from(input)}`, input.columns, true);
  aggregates.forEach((aggregate, index) => {
    const width = (widths[index] as number) < 0 ? spare : (widths[index] as number);
    const names = output.slice(position, position + width).map((column) => column.name);
    const sqls = aggregateSql(aggregate, { scope, ordered: input.ordered, rowOrder: source.ordered ? ident(ORD) : null, inputTypes }, names);
    sqls.forEach((sql, offset) => select.push(`${sql} AS ${ident(names[offset] as string)}`));
    position += width;
  });
  const groupBy = groups.length ? ` GROUP BY ${groups.join(', ')}` : '';
  return ctx.chain.add(`SELECT ${select.join(', ')} FROM ${from(source)}${groupBy}`, output, false);
}

/** ORDER BY terms of sort/top expressions: Kusto sorts descending by default, nulls last when descending, first when ascending. */
function orderTerms(expressions: readonly KNode[], scope: ScalarScope): string[] {
  return expressions.map((expression) => {
    let value = expression;
    let direction = 'DESC';
    let nulls: string | null = null;
    if (kindOf(expression) === 'OrderedExpression') {
      value = child(expression, 'Expression') as KNode;
      const ordering = child(expression, 'Ordering');
      const keyword = ordering ? child(ordering, 'AscOrDescKeyword') : null;
      if (keyword && (keyword.Text ?? '').toLowerCase() === 'asc') direction = 'ASC';
      const nullsClause = ordering ? child(ordering, 'NullsClause') : null;
      const which = nullsClause ? child(nullsClause, 'FirstOrLastKeyword') : null;
      if (which) nulls = (which.Text ?? '').toLowerCase() === 'first' ? 'FIRST' : 'LAST';
    }
    nulls ??= direction === 'ASC' ? 'FIRST' : 'LAST';
    const type = typeOf(value);
    let sql = scalar(value, scope);
    if (type === 'dynamic') sql = `CAST(${sql} AS VARCHAR)`;
    return `${sql} ${direction} NULLS ${nulls}`;
  });
}

const ordinal = (terms: string[]): string => `row_number() OVER (ORDER BY ${terms.join(', ')})`;

export function sort(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const terms = orderTerms(children(node, 'Expressions'), scopeOf(input, ctx));
  const list = input.columns.map((column) => ident(column.name));
  return ctx.chain.add(`SELECT ${[...list, `${ordinal(terms)} AS ${ident(ORD)}`].join(', ')} FROM ${from(input)}`, input.columns, true);
}

export function top(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const count = scalar(child(node, 'Expression') as KNode, scopeOf(input, ctx));
  const terms = orderTerms([child(node, 'ByExpression') as KNode], scopeOf(input, ctx));
  const list = input.columns.map((column) => ident(column.name));
  return ctx.chain.add(
    `SELECT ${[...list, `${ordinal(terms)} AS ${ident(ORD)}`].join(', ')} FROM ${from(input)} ORDER BY ${ident(ORD)} LIMIT ${count}`,
    input.columns,
    true,
  );
}

export function take(node: KNode, input: Relation, ctx: OperatorContext): Relation {
  const count = scalar(child(node, 'Expression') as KNode, scopeOf(input, ctx));
  const order = input.ordered ? ` ORDER BY ${ident(ORD)}` : '';
  return ctx.chain.add(`SELECT ${selectList(input)} FROM ${from(input)}${order} LIMIT greatest(${count}, 0)`, input.columns, input.ordered);
}

export function count(input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const name = output[0]?.name ?? 'Count';
  return ctx.chain.add(`SELECT count(*) AS ${ident(name)} FROM ${from(input)}`, output, false);
}

export function distinct(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const expressions = children(node, 'Expressions');
  const star = expressions.length === 1 && kindOf(expressions[0] as KNode) === 'StarExpression';
  const list = output.map((column, index) => {
    const expression = expressions[index];
    if (star || !expression) return ident(column.name);
    return `${scalar(valueOf(expression), scope)} AS ${ident(column.name)}`;
  });
  return ctx.chain.add(`SELECT DISTINCT ${list.join(', ')} FROM ${from(input)}`, output, false);
}

export function serialize(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  if (children(node, 'Expressions').length > 0) return extend(node, input, ctx, output);
  if (input.ordered) return input;
  return ctx.chain.add(`SELECT ${selectList(input)}, row_number() OVER () AS ${ident(ORD)} FROM ${from(input)}`, input.columns, true);
}
