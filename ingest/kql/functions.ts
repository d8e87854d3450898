/**
 * Kusto scalar functions as DuckDB SQL. Only the names in this table can be
 * called: a query cannot reach DuckDB functions (`read_csv`, ...) because a
 * function name is never copied into the SQL, only looked up here.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import {
  datetimeString,
  fromDynamic,
  fromTicks,
  scalar,
  stringToBool,
  stringToInteger,
  stringToReal,
  ticksOf,
  timespanText,
  toDynamic,
  typeOf,
  unsupported,
  type ScalarScope,
} from './scalar.js';
import type { Call, Translate } from './call.js';
import { DYNAMIC_FUNCTIONS } from './functions-dynamic.js';
import { TIME_FUNCTIONS } from './functions-time.js';
import { WINDOW_FUNCTIONS } from './functions-window.js';
import { duckType, str } from './sql-text.js';

const unary =
  (fn: string, type = 'string'): Translate =>
  (call) =>
    `${fn}(${call.as(0, type)})`;

/** A value of a non-dynamic type as Kusto's tostring() writes it ('' for null). */
function textOf(value: string, type: string): string {
  if (type === 'string') return value;
  if (type === 'datetime') return `coalesce(${datetimeString(value)}, '')`;
  if (type === 'timespan') return `coalesce(${timespanText(value)}, '')`;
  if (type === 'bool') return `CASE WHEN ${value} THEN 'True' WHEN NOT ${value} THEN 'False' ELSE '' END`;
  if (type === 'real' || type === 'decimal') return `coalesce(${realText(value)}, '')`;
  return `coalesce(CAST(${value} AS VARCHAR), '')`;
}

/** A BIGINT wrapped into 32 bits, as Kusto's toint() of a long does. */
const wrapInt = (value: string): string => `CAST(((${value} % 4294967296 + 4294967296) % 4294967296 + 2147483648) % 4294967296 - 2147483648 AS INTEGER)`;

const cast =
  (target: string): Translate =>
  (call) => {
    const type = typeOf(call.args[0] as KNode);
    const value = call.arg(0);
    if (type === 'dynamic') return fromDynamic(value, target);
    if (target === 'string') return textOf(value, type);
    if (target === type) return value;
    if (target === 'bool' && type === 'string') return stringToBool(value);
    // a real past int's range saturates; NaN is null
    if (target === 'int' && (type === 'real' || type === 'decimal'))
      return `(CASE WHEN NOT isnan(${value}) THEN CAST(greatest(least(trunc(${value}), 2147483647), -2147483648) AS INTEGER) END)`;
    if (target === 'long' && (type === 'real' || type === 'decimal')) return `TRY_CAST(trunc(${value}) AS BIGINT)`;
    if ((target === 'long' || target === 'int') && type === 'string') return stringToInteger(value, target);
    if ((target === 'long' || target === 'int' || target === 'real') && type === 'datetime') return `CAST(${ticksOf(value)} AS ${duckType(target)})`;
    if (target === 'int' && (type === 'timespan' || type === 'long')) return wrapInt(value);
    if (target === 'real' && type === 'string') return stringToReal(value);
    if (target === 'datetime' && (type === 'long' || type === 'int')) return fromTicks(value);
    if (target === 'datetime' && type === 'string') return `TRY_CAST(regexp_replace(trim(${value}), '(Z|[+-]00:?00)$', '') AS TIMESTAMP)`;
    return `TRY_CAST(${value} AS ${duckType(target)})`;
  };

/** A real as Kusto writes it (shortest round-trip text). */
const realText = (sql: string): string =>
  `(CASE WHEN isnan(${sql}) THEN 'NaN' WHEN ${sql} = 'inf'::DOUBLE THEN 'inf' WHEN ${sql} = '-inf'::DOUBLE THEN '-inf' ELSE CAST(${sql} AS VARCHAR) END)`;

/** Kusto substring: a negative start counts from the end; out of range gives ''. */
function substringSql(text: string, start: string, length: string | null): string {
  const s = `(CASE WHEN ${start} < 0 THEN length(${text}) + ${start} ELSE ${start} END)`;
  const body = length === null ? `substring(${text}, ${s} + 1)` : `substring(${text}, ${s} + 1, greatest(${length}, 0))`;
  return `(CASE WHEN ${s} < 0 THEN '' ELSE coalesce(${body}, '') END)`;
}

/** extract_all(regex, [groups,] text): every match; one capture group gives its values, several give arrays. */
function extractAll(c: Call): string {
  const regexNode = c.args[0] as KNode;
  const token = child(regexNode, 'Token');
  if (kindOf(regexNode) !== 'StringLiteralExpression' || !token) throw unsupported(regexNode, 'extract_all with a non-constant regex');
  const pattern = token.ValueText ?? '';
  const groups = (pattern.replace(/\\./g, '').match(/\((?!\?)/g) ?? []).length;
  const text = c.as(c.args.length - 1, 'string');
  const regex = str(pattern);
  if (groups <= 1) {
    const all = `regexp_extract_all(${text}, ${regex}, ${groups})`;
    return `(CASE WHEN len(${all}) = 0 THEN NULL ELSE to_json(${all}) END)`;
  }
  const values = Array.from({ length: groups }, (_, i) => `regexp_extract(m, ${regex}, ${i + 1})`);
  const matches = `list_transform(regexp_extract_all(${text}, ${regex}), m -> list_value(${values.join(', ')}))`;
  return `(CASE WHEN len(regexp_extract_all(${text}, ${regex})) = 0 THEN NULL ELSE to_json(${matches}) END)`;
}

const math =
  (fn: string): Translate =>
  (c) =>
    `${fn}(CAST(${c.as(0, 'real')} AS DOUBLE))`;

const logarithm =
  (fn: string): Translate =>
  (c) => {
    const x = `CAST(${c.as(0, 'real')} AS DOUBLE)`;
    return `(CASE WHEN ${x} < 0 THEN NULL WHEN ${x} = 0 THEN '-inf'::DOUBLE ELSE ${fn}(${x}) END)`;
  };

/** isnull() of the argument: a dynamic JSON null is null too; a string never is. */
function isMissing(c: Call): string {
  const type = typeOf(c.args[0] as KNode);
  if (type === 'string') return 'FALSE';
  if (type === 'dynamic') return `coalesce(json_type(${c.arg(0)}) = 'NULL', TRUE)`;
  return `(${c.arg(0)} IS NULL)`;
}

/** max_of / min_of: nulls are skipped; a NaN among reals makes the result NaN (DuckDB orders NaN above every number). */
function extremeOf(c: Call, fn: 'greatest' | 'least'): string {
  const values = c.args.map((_, i) => c.as(i, c.type));
  const sql = `${fn}(${values.join(', ')})`;
  if (c.type !== 'real') return sql;
  return `(CASE WHEN ${values.map((value) => `coalesce(isnan(${value}), FALSE)`).join(' OR ')} THEN 'nan'::DOUBLE ELSE ${sql} END)`;
}

const FUNCTIONS: Record<string, Translate> = {
  ...TIME_FUNCTIONS,
  ...DYNAMIC_FUNCTIONS,
  ...WINDOW_FUNCTIONS,
  string_size: (c) => `CAST(octet_length(encode(${c.as(0, 'string')})) AS BIGINT)`,
  extract_all: extractAll,
  isinf: (c) => `isinf(${c.arg(0)})`,
  isfinite: (c) => `isfinite(${c.arg(0)})`,
  ceiling: (c) => `ceil(${c.arg(0)})`,
  sign: (c) => `sign(${c.arg(0)})`,
  sin: math('sin'),
  cos: math('cos'),
  tan: math('tan'),
  asin: math('asin'),
  acos: math('acos'),
  atan: math('atan'),
  log2: logarithm('log2'),
  degrees: math('degrees'),
  radians: math('radians'),
  pi: () => 'pi()',
  strcmp: (c) => `(CASE WHEN ${c.as(0, 'string')} < ${c.as(1, 'string')} THEN -1 WHEN ${c.as(0, 'string')} > ${c.as(1, 'string')} THEN 1 ELSE 0 END)`,
  hash_sha256: (c) => `sha256(${c.as(0, 'string')})`,
  hash_md5: (c) => `md5(${c.as(0, 'string')})`,
  strlen: (c) => `coalesce(length(${c.as(0, 'string')}), 0)`,
  tolower: unary('lower'),
  toupper: unary('upper'),
  trim: (c) => `regexp_replace(regexp_replace(${c.as(1, 'string')}, '^(' || ${c.as(0, 'string')} || ')', ''), '(' || ${c.as(0, 'string')} || ')$', '')`,
  trim_start: (c) => `regexp_replace(${c.as(1, 'string')}, '^(' || ${c.as(0, 'string')} || ')', '')`,
  trim_end: (c) => `regexp_replace(${c.as(1, 'string')}, '(' || ${c.as(0, 'string')} || ')$', '')`,
  strcat: (c) => `(${c.args.map((_, i) => `coalesce(${c.as(i, 'string')}, '')`).join(' || ') || "''"})`,
  strcat_delim: (c) =>
    `concat_ws(${c.as(0, 'string')}, ${c.args
      .slice(1)
      .map((_, i) => `coalesce(${c.as(i + 1, 'string')}, '')`)
      .join(', ')})`,
  substring: (c) => substringSql(c.as(0, 'string'), c.arg(1), c.args.length > 2 ? c.arg(2) : null),
  split: (c) =>
    c.args.length > 2
      ? `(SELECT CASE WHEN p IS NULL THEN NULL ELSE to_json([p]) END FROM (SELECT list_extract(string_split(${c.as(0, 'string')}, ${c.as(1, 'string')}), ${c.arg(2)} + 1) AS p))`
      : `to_json(string_split(${c.as(0, 'string')}, ${c.as(1, 'string')}))`,
  replace_string: (c) => `replace(${c.as(0, 'string')}, ${c.as(1, 'string')}, ${c.as(2, 'string')})`,
  replace_regex: (c) => `regexp_replace(${c.as(0, 'string')}, ${c.as(1, 'string')}, regexp_replace(${c.as(2, 'string')}, '\\$([0-9])', '\\\\\\1', 'g'), 'g')`,
  extract: (c) => {
    const value = `nullif(regexp_extract(${c.as(2, 'string')}, ${c.as(0, 'string')}, CAST(${c.arg(1)} AS INTEGER)), '')`;
    return c.type === 'string' ? `coalesce(${value}, '')` : `TRY_CAST(${value} AS ${duckType(c.type)})`;
  },
  indexof: (c) => {
    const hay = c.as(0, 'string');
    const needle = c.as(1, 'string');
    if (c.args.length < 3) return `(CASE WHEN ${needle} = '' THEN NULL ELSE strpos(${hay}, ${needle}) - 1 END)`;
    const start = `(CASE WHEN ${c.arg(2)} < 0 THEN greatest(length(${hay}) + ${c.arg(2)}, 0) ELSE ${c.arg(2)} END)`;
    return `(CASE WHEN ${needle} = '' THEN NULL WHEN ${start} > length(${hay}) THEN -1 WHEN strpos(substring(${hay}, ${start} + 1), ${needle}) = 0 THEN -1 ELSE strpos(substring(${hay}, ${start} + 1), ${needle}) - 1 + ${start} END)`;
  },
  reverse: unary('reverse'),
  tostring: cast('string'),
  toint: cast('int'),
  tolong: cast('long'),
  todouble: cast('real'),
  toreal: cast('real'),
  todecimal: cast('real'),
  tobool: cast('bool'),
  toboolean: cast('bool'),
  todatetime: cast('datetime'),
  toguid: cast('guid'),
  iff: (c) => `CASE WHEN ${c.arg(0)} THEN ${c.as(1, c.type)} ELSE ${c.as(2, c.type)} END`,
  iif: (c) => FUNCTIONS['iff']!(c),
  case: (c) => {
    const parts: string[] = [];
    for (let i = 0; i + 1 < c.args.length; i += 2) parts.push(`WHEN ${c.arg(i)} THEN ${c.as(i + 1, c.type)}`);
    return `CASE ${parts.join(' ')} ELSE ${c.as(c.args.length - 1, c.type)} END`;
  },
  // an empty string counts as missing for coalesce, as a null does
  coalesce: (c) =>
    c.type === 'string'
      ? `coalesce(${c.args.map((_, i) => `nullif(${c.as(i, 'string')}, '')`).join(', ')}, '')`
      : `coalesce(${c.args.map((_, i) => c.as(i, c.type)).join(', ')})`,
  isnull: isMissing,
  isnotnull: (c) => `(NOT ${isMissing(c)})`,
  isempty: (c) => (typeOf(c.args[0] as KNode) === 'string' ? `coalesce(${c.arg(0)} = '', TRUE)` : isMissing(c)),
  isnotempty: (c) => (typeOf(c.args[0] as KNode) === 'string' ? `coalesce(${c.arg(0)} <> '', FALSE)` : `(NOT ${isMissing(c)})`),
  not: (c) => `(NOT ${c.arg(0)})`,
  abs: (c) => `abs(${c.arg(0)})`,
  round: (c) => `round(${c.arg(0)}, ${c.args.length > 1 ? `CAST(${c.arg(1)} AS INTEGER)` : '0'})`,
  // Kusto's sqrt of a negative is NaN and its logarithms of one null (DuckDB raises)
  sqrt: (c) => `(CASE WHEN ${c.as(0, 'real')} < 0 THEN 'nan'::DOUBLE ELSE sqrt(${c.as(0, 'real')}) END)`,
  pow: (c) => `pow(${c.arg(0)}, ${c.arg(1)})`,
  log: logarithm('ln'),
  log10: logarithm('log10'),
  exp: (c) => `exp(${c.arg(0)})`,
  max_of: (c) => extremeOf(c, 'greatest'),
  min_of: (c) => extremeOf(c, 'least'),
  hash: (c) => `CAST(hash(${c.arg(0)}) AS BIGINT)`,
  strrep: (c) => `repeat(${c.as(0, 'string')}, CAST(${c.arg(1)} AS BIGINT))`,
  countof: (c) =>
    c.args.length > 2
      ? `CAST(len(regexp_extract_all(${c.as(0, 'string')}, ${c.as(1, 'string')})) AS BIGINT)`
      : `CAST(len(string_split(${c.as(0, 'string')}, ${c.as(1, 'string')})) - 1 AS BIGINT)`,
  isnan: (c) => `isnan(${c.arg(0)})`,
};

export function callFunction(node: KNode, scope: ScalarScope): string {
  const aggregate = scope.aggregate?.(node);
  if (aggregate) return aggregate;
  const name = (child(node, 'Name') as unknown as { SimpleName: string }).SimpleName;
  const translate = FUNCTIONS[name];
  if (!translate) throw new ServiceError('kql_error', `unsupported function ${name}()`, { function: name });
  const args = children(child(node, 'ArgumentList') as KNode, 'Expressions');
  const call: Call = {
    node,
    scope,
    args,
    type: typeOf(node),
    arg: (index) => scalar(args[index] as KNode, scope),
    as: (index, type) => {
      const arg = args[index] as KNode;
      const sql = scalar(arg, scope);
      const from = typeOf(arg);
      if (from === 'dynamic' && type !== 'dynamic') return fromDynamic(sql, type);
      if (type === 'dynamic' && from !== 'dynamic') return toDynamic(sql, from);
      if (type === 'string' && from !== 'string') return textOf(sql, from);
      return sql;
    },
  };
  return translate(call);
}
