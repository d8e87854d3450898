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
  /** the input's row order as SQL (arg_max/arg_min break ties by it), when it has one */
  readonly rowOrder?: string | null;
  /** the input's column types (arg_max(x, *) picks them all) */
  readonly inputTypes: ReadonlyMap<string, string>;
}

/** The function call under `name = agg(...)`, or the node itself. */
export function aggregateCall(node: KNode): KNode {
  return kindOf(node) === 'SimpleNamedExpression' ? (child(node, 'Expression') as KNode) : node;
}

/** The aggregation function's name ('' when the node is an expression over aggregates, such as `max(x) - min(x)`). */
export const aggregateName = (call: KNode): string =>
  kindOf(call) === 'FunctionCallExpression' ? (child(call, 'Name') as unknown as { SimpleName: string }).SimpleName : '';

interface ListShape {
  readonly distinct: boolean;
  /** dynamic arrays give their elements (Kusto's make_list and make_set of arrays) */
  readonly flatten: boolean;
  /** nulls kept (make_list_with_nulls) */
  readonly nulls: boolean;
}

function listOf(value: string, shape: ListShape, ctx: AggregateContext, limit: string | null): string {
  const order = ctx.ordered && !shape.distinct ? ` ORDER BY ${ident(ORD)}` : '';
  const filter = shape.nulls ? '' : ` FILTER (WHERE ${value} IS NOT NULL)`;
  const item = shape.flatten ? `(CASE WHEN json_type(${value}) = 'ARRAY' THEN CAST(json_extract(${value}, '$[*]') AS JSON[]) ELSE [${value}] END)` : value;
  let list = `list(${shape.distinct && !shape.flatten ? 'DISTINCT ' : ''}${item}${order})${filter}`;
  if (shape.flatten) list = `flatten(${list})`;
  // first-appearance order (list_distinct reorders)
  if (shape.flatten && shape.distinct) list = `list_filter(${list}, (x, i) -> list_position(${list}, x) = i)`;
  return `coalesce(to_json(${limit ? `list_slice(${list}, 1, ${limit})` : list}), CAST('[]' AS JSON))`;
}

/**
 * The SQL of each output column an aggregate makes: one, except arg_max/arg_min
 * (one per returned column: `outputs` names them).
 */
export function aggregateSql(node: KNode, ctx: AggregateContext, outputs: readonly string[]): string[] {
  const call = aggregateCall(node);
  const sql = aggregateOf(call, ctx, outputs);
  if (sql) return sql;
  // an expression over aggregates: each aggregate call inside it is computed by the GROUP BY
  const scope: ScalarScope = { ...ctx.scope, aggregate: (inner) => aggregateOf(inner, ctx, [])?.[0] ?? null };
  return [scalar(call, scope)];
}

/** The SQL of an aggregation function call, or null when `call` is not one. */
function aggregateOf(call: KNode, ctx: AggregateContext, outputs: readonly string[]): string[] | null {
  if (kindOf(call) !== 'FunctionCallExpression') return null;
  const name = aggregateName(call);
  const args = children(child(call, 'ArgumentList') as KNode, 'Expressions');
  const arg = (index: number): string => scalar(args[index] as KNode, ctx.scope);
  const num = (index: number): string => {
    const type = typeOf(args[index] as KNode);
    return type === 'dynamic' ? fromDynamic(arg(index), 'real') : arg(index);
  };
  const type = typeOf(call);
  const dynamic = (index: number): boolean => typeOf(args[index] as KNode) === 'dynamic';
  const typed = (sql: string): string => `CAST(${sql} AS ${duckType(type)})`;
  switch (name) {
    case 'count':
      // `count(x)`: the engine counts rows whatever x is (nulls too), as `count()`
      return ['count(*)'];
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
      // a NaN makes both NaN (DuckDB orders NaN above every number, so only min needs it)
      if (name === 'min' && (type === 'real' || type === 'decimal'))
        return [`(CASE WHEN bool_or(isnan(${arg(0)})) THEN 'nan'::DOUBLE ELSE min(${arg(0)}) END)`];
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
    case 'make_set':
    case 'make_list_with_nulls': {
      const shape = { distinct: name === 'make_set', flatten: dynamic(0), nulls: name === 'make_list_with_nulls' };
      return [listOf(toDynamic(arg(0), typeOf(args[0] as KNode)), shape, ctx, args.length > 1 && !shape.nulls ? arg(1) : null)];
    }
    case 'make_list_if':
    case 'make_set_if': {
      const shape = { distinct: name === 'make_set_if', flatten: dynamic(0), nulls: false };
      return [listOf(`CASE WHEN ${arg(1)} THEN ${toDynamic(arg(0), typeOf(args[0] as KNode))} END`, shape, ctx, null)];
    }
    case 'count_distinct':
      return [`count(DISTINCT ${arg(0)})`];
    case 'percentile':
      return [`quantile_disc(${num(0)}, ${arg(1)} / 100.0)`];
    case 'arg_max':
    case 'arg_min':
      return argExtreme(name === 'arg_max' ? 'arg_max' : 'arg_min', args, ctx, outputs);
    default:
      return null;
  }
}

/**
 * arg_max/arg_min(by, cols...): `by`'s extreme, then each column's value on that row. Rows whose
 * `by` is null lose to any other; when every row's is null, one row is still returned.
 */
function argExtreme(fn: string, args: readonly KNode[], ctx: AggregateContext, outputs: readonly string[]): string[] {
  const by = scalar(args[0] as KNode, ctx.scope);
  const rest = outputs.slice(1);
  const extras = args.slice(1);
  const valueOf = (extra: KNode): KNode => (kindOf(extra) === 'SimpleNamedExpression' ? (child(extra, 'Expression') as KNode) : extra);
  const star = extras.some((extra) => kindOf(extra) === 'StarExpression');
  const values = rest.map((column, index) => {
    // without `*` the outputs follow the arguments (their names may carry a suffix such as `w1`)
    if (!star) return scalar(valueOf(extras[index] as KNode), ctx.scope);
    const named = extras.find((extra) => kindOf(extra) !== 'StarExpression' && (declared(extra) ?? valueOf(extra).ToString().trim()) === column);
    if (named) return scalar(valueOf(named), ctx.scope);
    const base = ctx.scope.columns.has(column) ? column : column.replace(/[0-9]+$/, '');
    if (!ctx.scope.columns.has(base)) throw new ServiceError('kql_error', `arg_max/arg_min: cannot resolve output column ${column}`);
    return ident(base);
  });
  // ties go to the earliest row: the order key is (by, -row) for arg_max and (by, row) for arg_min
  const row = ctx.rowOrder ? (fn === 'arg_max' ? `-${ctx.rowOrder}` : ctx.rowOrder) : null;
  const key = row ? `struct_pack(b := ${by}, r := ${row})` : by;
  const first = (value: string): string => (ctx.rowOrder ? `arg_min(${value}, ${ctx.rowOrder})` : `first(${value})`);
  const pick = (value: string): string => `(CASE WHEN count(${by}) = 0 THEN ${first(value)} ELSE ${fn}(${value}, ${key}) FILTER (WHERE ${by} IS NOT NULL) END)`;
  return [`${fn === 'arg_max' ? 'max' : 'min'}(${by})`, ...values.map(pick)];
}

const declared = (node: KNode): string | null =>
  kindOf(node) === 'SimpleNamedExpression' ? (child(child(node, 'Name') as KNode, 'SimpleName') as unknown as string) : null;
