/**
 * Kusto aggregation functions (summarize, make-series) as DuckDB aggregates.
 * Only names in this table are accepted. `make_list` keeps the input order
 * when the input carries one.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { ORD } from './relation.js';
import { fromDynamic, scalar, toDynamic, typeOf, type ScalarScope } from './scalar.js';
import { duckType, ident } from './sql-text.js';

export interface AggregateContext {
  readonly scope: ScalarScope;
  readonly ordered: boolean;
  /** the input's column types (arg_max(x, *) picks them all) */
  readonly inputTypes: ReadonlyMap<string, string>;
}

/** The function call under `name = agg(...)`, or the node itself. */
export function aggregateCall(node: KNode): KNode {
  return kindOf(node) === 'SimpleNamedExpression' ? (child(node, 'Expression') as KNode) : node;
}

export const aggregateName = (call: KNode): string => (child(call, 'Name') as unknown as { SimpleName: string }).SimpleName;

function listOf(value: string, distinct: boolean, ctx: AggregateContext, limit: string | null): string {
  const order = ctx.ordered && !distinct ? ` ORDER BY ${ident(ORD)}` : '';
  const list = `list(${distinct ? 'DISTINCT ' : ''}${value}${order}) FILTER (WHERE ${value} IS NOT NULL)`;
  return `coalesce(to_json(${limit ? `list_slice(${list}, 1, ${limit})` : list}), CAST('[]' AS JSON))`;
}

/**
 * The SQL of each output column an aggregate makes: one, except arg_max/arg_min
 * (one per returned column: `outputs` names them).
 */
export function aggregateSql(node: KNode, ctx: AggregateContext, outputs: readonly string[]): string[] {
  const call = aggregateCall(node);
  if (kindOf(call) !== 'FunctionCallExpression')
    throw new ServiceError('kql_error', 'summarize needs an aggregation function', { text: call.ToString().trim() });
  const name = aggregateName(call);
  const args = children(child(call, 'ArgumentList') as KNode, 'Expressions');
  const arg = (index: number): string => scalar(args[index] as KNode, ctx.scope);
  const num = (index: number): string => {
    const type = typeOf(args[index] as KNode);
    return type === 'dynamic' ? fromDynamic(arg(index), 'real') : arg(index);
  };
  const type = typeOf(call);
  const typed = (sql: string): string => `CAST(${sql} AS ${duckType(type)})`;
  switch (name) {
    case 'count':
      return [args.length ? `count(${arg(0)})` : 'count(*)'];
    case 'countif':
      return [`count(*) FILTER (WHERE ${arg(0)})`];
    case 'dcount':
      return [`count(DISTINCT ${arg(0)})`];
    case 'dcountif':
      return [`count(DISTINCT ${arg(0)}) FILTER (WHERE ${arg(1)})`];
    case 'sum':
      return [`coalesce(${typed(`sum(${num(0)})`)}, ${typed('0')})`];
    case 'sumif':
      return [`coalesce(${typed(`sum(${num(0)}) FILTER (WHERE ${arg(1)})`)}, ${typed('0')})`];
    case 'avg':
      return [`coalesce(avg(${num(0)}), 'nan'::DOUBLE)`];
    case 'avgif':
      return [`coalesce(avg(${num(0)}) FILTER (WHERE ${arg(1)}), 'nan'::DOUBLE)`];
    case 'min':
    case 'max':
      return [`${name}(${arg(0)})`];
    case 'minif':
    case 'maxif':
      return [`${name.slice(0, 3)}(${arg(0)}) FILTER (WHERE ${arg(1)})`];
    case 'stdev':
      return [`CASE WHEN count(${num(0)}) = 1 THEN 0.0 ELSE stddev_samp(${num(0)}) END`];
    case 'stdevp':
      return [`stddev_pop(${num(0)})`];
    case 'variance':
      return [`CASE WHEN count(${num(0)}) = 1 THEN 0.0 ELSE var_samp(${num(0)}) END`];
    case 'variancep':
      return [`var_pop(${num(0)})`];
    case 'any':
    case 'take_any':
      return args.map((_, index) => `any_value(${arg(index)})`);
    case 'make_list':
      return [listOf(toDynamic(arg(0), typeOf(args[0] as KNode)), false, ctx, args.length > 1 ? arg(1) : null)];
    case 'make_set':
      return [listOf(toDynamic(arg(0), typeOf(args[0] as KNode)), true, ctx, args.length > 1 ? arg(1) : null)];
    case 'make_list_if':
      return [listOf(`CASE WHEN ${arg(1)} THEN ${toDynamic(arg(0), typeOf(args[0] as KNode))} END`, false, ctx, null)];
    case 'make_set_if':
      return [listOf(`CASE WHEN ${arg(1)} THEN ${toDynamic(arg(0), typeOf(args[0] as KNode))} END`, true, ctx, null)];
    case 'percentile':
      return [`quantile_disc(${num(0)}, ${arg(1)} / 100.0)`];
    case 'arg_max':
    case 'arg_min':
      return argExtreme(name === 'arg_max' ? 'arg_max' : 'arg_min', args, ctx, outputs);
    default:
      throw new ServiceError('kql_error', `unsupported aggregation function ${name}()`, { function: name });
  }
}

function argExtreme(fn: string, args: readonly KNode[], ctx: AggregateContext, outputs: readonly string[]): string[] {
  const by = scalar(args[0] as KNode, ctx.scope);
  const [first, ...rest] = outputs;
  const result = [`${fn === 'arg_max' ? 'max' : 'min'}(${by})`];
  void first;
  const named = new Map<string, string>();
  for (const extra of args.slice(1)) {
    if (kindOf(extra) === 'StarExpression') continue;
    const inner = kindOf(extra) === 'SimpleNamedExpression' ? (child(extra, 'Expression') as KNode) : extra;
    const name = kindOf(extra) === 'SimpleNamedExpression' ? (child(child(extra, 'Name') as KNode, 'SimpleName') as unknown as string) : null;
    named.set(name ?? inner.ToString().trim(), scalar(inner, ctx.scope));
  }
  for (const column of rest) {
    const value = named.get(column) ?? (ctx.scope.columns.has(column) ? ident(column) : null);
    if (value === null) throw new ServiceError('kql_error', `arg_max/arg_min: cannot resolve output column ${column}`);
    result.push(`${fn}(${value}, ${by})`);
  }
  return result;
}
