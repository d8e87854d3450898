/**
 * Kusto's series_* functions and range(): dynamic arrays in, dynamic arrays
 * (or bags, or reals) out, as DuckDB list expressions. A series argument is
 * read as DOUBLE[] (null elements stay null); a scalar argument of an
 * element-wise function applies to every element. A value used several
 * times is bound once as a lambda parameter (`bind`), so no argument's SQL is
 * repeated. Functions returning several columns (series_stats,
 * series_fit_line) give their first one, as `extend x = f(...)` names it.
 */
import { child, children, type KNode } from './kusto.js';
import { datetimeString, scalar, toDynamic, typeOf, type ScalarScope } from './scalar.js';

interface Args {
  readonly nodes: readonly KNode[];
  sql(index: number): string;
  /** argument i as DOUBLE[] (a series) */
  series(index: number): string;
  /** argument i as a DOUBLE[] when it is dynamic, otherwise a scalar DOUBLE */
  operand(index: number): { sql: string; list: boolean };
}

let bound = 0;

/** `body` over `values` evaluated once each: list_transform([struct], s -> body(s.f0, s.f1, ...))[1]. */
function bind(values: readonly string[], body: (names: string[]) => string): string {
  const name = `__s${(bound = (bound + 1) % 1_000_000)}`;
  const fields = values.map((value, index) => `f${index} := ${value}`).join(', ');
  return `(list_transform([struct_pack(${fields})], ${name} -> ${body(values.map((_, index) => `${name}.f${index}`))}))[1]`;
}

const asSeries = (sql: string): string => `TRY_CAST(${sql} AS DOUBLE[])`;

/** Element-wise over one or two operands (a scalar operand is the same for every element). */
function elementwise(args: Args, op: (a: string, b: string) => string): string {
  const a = args.operand(0);
  const b = args.operand(1);
  return bind([a.sql, b.sql], ([x, y]) => {
    const length = a.list && b.list ? `greatest(len(${x}), len(${y}))` : `len(${a.list ? x : y})`;
    const at = (value: string, list: boolean): string => (list ? `${value}[__i]` : value);
    return `to_json(list_transform(generate_series(1, ${length}), __i -> ${op(at(x as string, a.list), at(y as string, b.list))}))`;
  });
}

const unary =
  (fn: (x: string) => string) =>
  (args: Args): string =>
    `to_json(list_transform(${args.series(0)}, __x -> ${fn('__x')}))`;

/** Missing elements (null, or equal to the placeholder argument) replaced by `fill(list, i)`. */
function fill(args: Args, placeholderIndex: number, fillAt: (list: string, missing: (j: string) => string, i: string) => string): string {
  const placeholder = args.nodes.length > placeholderIndex ? args.operand(placeholderIndex).sql : 'CAST(NULL AS DOUBLE)';
  return bind([args.series(0), placeholder], ([list, missingValue]) => {
    const missing = (j: string): string => `(${list}[${j}] IS NULL OR ${list}[${j}] IS NOT DISTINCT FROM ${missingValue})`;
    return `to_json(list_transform(generate_series(1, len(${list})), __i -> CASE WHEN ${missing('__i')} THEN ${fillAt(list as string, missing, '__i')} ELSE ${list}[__i] END))`;
  });
}

const lastBefore = (list: string, missing: (j: string) => string, i: string): string =>
  `list_filter(generate_series(1, ${i}), __j -> NOT ${missing('__j')})[-1]`;
const firstAfter = (list: string, missing: (j: string) => string, i: string): string =>
  `list_filter(generate_series(${i}, len(${list})), __j -> NOT ${missing('__j')})[1]`;

function fillLinear(args: Args): string {
  return fill(args, 1, (list, missing, i) => {
    const p = lastBefore(list, missing, i);
    const q = firstAfter(list, missing, i);
    return `CASE WHEN ${p} IS NULL THEN ${list}[${q}] WHEN ${q} IS NULL THEN ${list}[${p}] ELSE ${list}[${p}] + (${list}[${q}] - ${list}[${p}]) * (${i} - ${p}) / (${q} - ${p}) END`;
  });
}

/** Sums over a series with x = 1..n: the inputs of a least-squares line. */
function lineFit(args: Args, present: (fit: Record<string, string>) => string): string {
  return bind([args.series(0)], ([y]) => {
    const n = `len(${y})`;
    const sum = (term: string): string => `list_sum(list_transform(${y}, (__e, __x) -> ${term}))`;
    return bind([y as string, `CAST(${n} AS DOUBLE)`, sum('__x'), sum('__e'), sum('__e * __x'), sum('__x * __x')], ([l, count, sx, sy, sxy, sxx]) => {
      const slope = `((${count} * ${sxy} - ${sx} * ${sy}) / nullif(${count} * ${sxx} - ${sx} * ${sx}, 0))`;
      const intercept = `((${sy} - ${slope} * ${sx}) / ${count})`;
      const fitted = `list_transform(${l}, (__e, __x) -> ${intercept} + ${slope} * __x)`;
      const mean = `(${sy} / ${count})`;
      const total = `list_sum(list_transform(${l}, __e -> (__e - ${mean}) * (__e - ${mean})))`;
      const residual = `list_sum(list_transform(${l}, (__e, __x) -> (__e - (${intercept} + ${slope} * __x)) * (__e - (${intercept} + ${slope} * __x))))`;
      return present({
        rsquare: `(CASE WHEN ${total} = 0 THEN 1.0 ELSE 1 - ${residual} / ${total} END)`,
        slope,
        variance: `list_var_samp(${l})`,
        rvariance: `(${residual} / nullif(${count} - 1, 0))`,
        interception: intercept,
        line_fit: `to_json(${fitted})`,
      });
    });
  });
}

function stats(args: Args, present: (fields: Record<string, string>) => string): string {
  return bind([`list_filter(${args.series(0)}, __e -> __e IS NOT NULL)`], ([l]) =>
    present({
      min: `list_min(${l})`,
      min_idx: `CAST(list_position(${l}, list_min(${l})) - 1 AS BIGINT)`,
      max: `list_max(${l})`,
      max_idx: `CAST(list_position(${l}, list_max(${l})) - 1 AS BIGINT)`,
      avg: `list_avg(${l})`,
      stdev: `list_stddev_samp(${l})`,
      variance: `list_var_samp(${l})`,
      sum: `list_sum(${l})`,
      len: `CAST(len(${l}) AS BIGINT)`,
    }),
  );
}

const bag = (fields: Record<string, string>): string =>
  `json_object(${Object.entries(fields)
    .map(([key, value]) => `'${key}', ${value}`)
    .join(', ')})`;
const first = (fields: Record<string, string>): string => Object.values(fields)[0] as string;

/** y[n] = sum_k f[k] x[n - k + offset], x zero outside the series; f divided by its sum when normalized. */
function fir(args: Args): string {
  const normalize = args.nodes.length > 2 ? args.sql(2) : null;
  const center = args.nodes.length > 3 ? args.sql(3) : 'FALSE';
  return bind([args.series(0), args.series(1)], ([x, f]) => {
    const scale = `(CASE WHEN ${normalize ?? `list_min(${f}) >= 0`} AND list_sum(${f}) <> 0 THEN list_sum(${f}) ELSE 1 END)`;
    const offset = `(CASE WHEN ${center} THEN len(${f}) // 2 ELSE 0 END)`;
    const term = `coalesce(${x}[__i - __k + 1 + ${offset}], 0) * ${f}[__k]`;
    const guarded = `CASE WHEN __i - __k + 1 + ${offset} BETWEEN 1 AND len(${x}) THEN ${term} ELSE 0 END`;
    return `to_json(list_transform(generate_series(1, len(${x})), __i -> list_sum(list_transform(generate_series(1, len(${f})), __k -> ${guarded})) / ${scale}))`;
  });
}

/** y[n] = (sum_k b[k] x[n-k] - sum_{k>=1} a[k] y[n-k]) / a[0], folded left to right. */
function iir(args: Args): string {
  return bind([args.series(0), args.series(1), args.series(2)], ([x, b, a]) => {
    const forward = `list_sum(list_transform(generate_series(1, len(${b})), __k -> CASE WHEN __n - __k + 1 >= 1 THEN ${b}[__k] * coalesce(${x}[__n - __k + 1], 0) ELSE 0 END))`;
    const back = `coalesce(list_sum(list_transform(generate_series(2, len(${a})), __k -> CASE WHEN __n - __k + 1 >= 1 THEN ${a}[__k] * __acc[__n - __k + 1] ELSE 0 END)), 0)`;
    const step = `list_append(__acc, (${forward} - ${back}) / ${a}[1])`;
    return `to_json(list_reduce(list_transform(generate_series(1, len(${x})), __i -> [CAST(__i AS DOUBLE)]), (__acc, __cur) -> (list_transform([CAST(__cur[1] AS BIGINT)], __n -> ${step}))[1], CAST([] AS DOUBLE[])))`;
  });
}

function pearson(args: Args): string {
  return bind([args.series(0), args.series(1)], ([a, b]) => {
    const sum = (term: string): string => `list_sum(list_transform(generate_series(1, len(${a})), __i -> ${term}))`;
    const n = `len(${a})`;
    const numerator = `(${n} * ${sum(`${a}[__i] * ${b}[__i]`)} - ${sum(`${a}[__i]`)} * ${sum(`${b}[__i]`)})`;
    const spread = (s: string): string => `(${n} * ${sum(`${s}[__i] * ${s}[__i]`)} - ${sum(`${s}[__i]`)} * ${sum(`${s}[__i]`)})`;
    return `(${numerator} / sqrt(${spread(a as string)} * ${spread(b as string)}))`;
  });
}

/** range(start, stop[, step]): start, start+step, ... up to stop inclusive. */
function range(args: Args): string {
  const startType = typeOf(args.nodes[0] as KNode);
  const real = args.nodes.some((node) => ['real', 'decimal'].includes(typeOf(node)));
  const step = args.nodes.length > 2 ? args.sql(2) : 'CAST(1 AS BIGINT)';
  if (startType === 'datetime') {
    const micros = `to_microseconds(CAST(${step} // 10 AS BIGINT))`;
    return `to_json(list_transform(generate_series(${args.sql(0)}, ${args.sql(1)}, ${micros}), __d -> ${datetimeString('__d')}))`;
  }
  return bind([args.sql(0), args.sql(1), step], ([start, stop, by]) => {
    const count = `CAST(floor((${stop} - ${start}) / ${by}) AS BIGINT)`;
    return `to_json(list_transform(generate_series(0, ${count}), __i -> CAST(${start} + __i * ${by} AS ${real ? 'DOUBLE' : 'BIGINT'})))`;
  });
}

const compare = (op: string) => (args: Args) => elementwise(args, (a, b) => `(${a} ${op} ${b})`);

const SERIES: Record<string, (args: Args) => string> = {
  range,
  series_add: (args) => elementwise(args, (a, b) => `(${a} + ${b})`),
  series_subtract: (args) => elementwise(args, (a, b) => `(${a} - ${b})`),
  series_multiply: (args) => elementwise(args, (a, b) => `(${a} * ${b})`),
  series_divide: (args) => elementwise(args, (a, b) => `(${a} / ${b})`),
  series_pow: (args) => elementwise(args, (a, b) => `pow(${a}, ${b})`),
  series_greater: compare('>'),
  series_greater_equals: compare('>='),
  series_less: compare('<'),
  series_less_equals: compare('<='),
  series_equals: compare('='),
  series_not_equals: compare('<>'),
  series_abs: unary((x) => `abs(${x})`),
  series_sign: unary((x) => `sign(${x})`),
  series_exp: unary((x) => `exp(${x})`),
  series_log: unary((x) => `CASE WHEN ${x} > 0 THEN ln(${x}) END`),
  series_floor: unary((x) => `floor(${x})`),
  series_ceiling: unary((x) => `ceil(${x})`),
  series_cos: unary((x) => `cos(${x})`),
  series_sin: unary((x) => `sin(${x})`),
  series_tan: unary((x) => `tan(${x})`),
  series_acos: unary((x) => `acos(${x})`),
  series_asin: unary((x) => `asin(${x})`),
  series_atan: unary((x) => `atan(${x})`),
  series_fill_const: (args) => fill(args, 2, () => `CAST(${args.operand(1).sql} AS DOUBLE)`),
  series_fill_forward: (args) => fill(args, 1, (list, missing, i) => `${list}[${lastBefore(list, missing, i)}]`),
  series_fill_backward: (args) => fill(args, 1, (list, missing, i) => `${list}[${firstAfter(list, missing, i)}]`),
  series_fill_linear: fillLinear,
  series_stats: (args) => stats(args, first),
  series_stats_dynamic: (args) => stats(args, bag),
  series_fit_line: (args) => lineFit(args, first),
  series_fit_line_dynamic: (args) => lineFit(args, bag),
  series_fir: fir,
  series_iir: iir,
  series_pearson_correlation: pearson,
};

/** A series_* function or range() as SQL, or null when `node` calls another function. */
export function seriesCall(node: KNode, scope: ScalarScope): string | null {
  const name = (child(node, 'Name') as unknown as { SimpleName: string }).SimpleName;
  const translate = SERIES[name];
  if (!translate) return null;
  const nodes = children(child(node, 'ArgumentList') as KNode, 'Expressions');
  const sql = (index: number): string => scalar(nodes[index] as KNode, scope);
  const args: Args = {
    nodes,
    sql,
    series: (index) => asSeries(toDynamic(sql(index), typeOf(nodes[index] as KNode))),
    operand: (index) => {
      const type = typeOf(nodes[index] as KNode);
      if (type === 'dynamic') return { sql: asSeries(sql(index)), list: true };
      return { sql: `CAST(${sql(index)} AS DOUBLE)`, list: false };
    },
  };
  return translate(args);
}
