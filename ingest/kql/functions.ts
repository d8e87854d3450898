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
  stringToTimespan,
  ticksOf,
  timespanText,
  toDynamic,
  typeOf,
  unsupported,
  type ScalarScope,
} from './scalar.js';
import { duckType, str } from './sql-text.js';

interface Call {
  readonly node: KNode;
  readonly args: readonly KNode[];
  /** argument i as SQL */
  arg(index: number): string;
  /** argument i as SQL of the given Kusto type (dynamic values converted) */
  as(index: number, type: string): string;
  readonly type: string;
}

type Translate = (call: Call) => string;

const TICKS_PER_MICRO = 10;

/** bin() for every binnable type; also used by summarize and make-series. */
function binSql(value: string, valueType: string, size: string, sizeType: string): string {
  if (valueType === 'datetime') {
    // Kusto bins datetimes from 0001-01-01 (62135596800 s before the Unix epoch)
    const micros = sizeType === 'timespan' ? `CAST(${size} // ${TICKS_PER_MICRO} AS BIGINT)` : `CAST(${size} AS BIGINT)`;
    const shifted = `(epoch_us(${value}) + 62135596800000000)`;
    return `make_timestamp(CAST(floor(${shifted} / ${micros}) * ${micros} - 62135596800000000 AS BIGINT))`;
  }
  if (valueType === 'real' || sizeType === 'real') return `(floor(${value} / ${size}) * ${size})`;
  return `CAST(floor(${value} / ${size}) * ${size} AS ${duckType(valueType)})`;
}

const unary =
  (fn: string, type = 'string'): Translate =>
  (call) =>
    `${fn}(${call.as(0, type)})`;

const cast =
  (target: string): Translate =>
  (call) => {
    const type = typeOf(call.args[0] as KNode);
    const value = call.arg(0);
    if (type === 'dynamic') return fromDynamic(value, target);
    if (target === 'string') {
      if (type === 'datetime') return `coalesce(${datetimeString(value)}, '')`;
      if (type === 'timespan') return `coalesce(${timespanText(value)}, '')`;
      if (type === 'bool') return `CASE WHEN ${value} THEN 'True' WHEN NOT ${value} THEN 'False' ELSE '' END`;
      if (type === 'real' || type === 'decimal') return `coalesce(${realText(value)}, '')`;
      return `coalesce(CAST(${value} AS VARCHAR), '')`;
    }
    if (target === type) return value;
    if (target === 'bool' && type === 'string') return stringToBool(value);
    if ((target === 'long' || target === 'int') && (type === 'real' || type === 'decimal')) return `TRY_CAST(trunc(${value}) AS ${duckType(target)})`;
    if ((target === 'long' || target === 'int') && type === 'string') return stringToInteger(value, target);
    if ((target === 'long' || target === 'int' || target === 'real') && type === 'datetime') return `CAST(${ticksOf(value)} AS ${duckType(target)})`;
    if (target === 'int' && type === 'timespan')
      return `CAST(((${value} % 4294967296 + 4294967296) % 4294967296 + 2147483648) % 4294967296 - 2147483648 AS INTEGER)`;
    if (target === 'real' && type === 'string') return stringToReal(value);
    if (target === 'datetime' && (type === 'long' || type === 'int')) return fromTicks(value);
    if (target === 'datetime' && type === 'string') return `TRY_CAST(regexp_replace(trim(${value}), '(Z|[+-]00:?00)$', '') AS TIMESTAMP)`;
    return `TRY_CAST(${value} AS ${duckType(target)})`;
  };

/** A real as Kusto writes it (shortest round-trip text). */
const realText = (sql: string): string =>
  `(CASE WHEN isnan(${sql}) THEN 'NaN' WHEN ${sql} = 'inf'::DOUBLE THEN 'Infinity' WHEN ${sql} = '-inf'::DOUBLE THEN '-Infinity' ELSE CAST(${sql} AS VARCHAR) END)`;

/** Kusto substring: a negative start counts from the end; out of range gives ''. */
function substringSql(text: string, start: string, length: string | null): string {
  const s = `(CASE WHEN ${start} < 0 THEN length(${text}) + ${start} ELSE ${start} END)`;
  const body = length === null ? `substring(${text}, ${s} + 1)` : `substring(${text}, ${s} + 1, greatest(${length}, 0))`;
  return `(CASE WHEN ${s} < 0 THEN '' ELSE coalesce(${body}, '') END)`;
}

/** startofX(date, offset): the period's start, moved by whole periods. */
const startOf =
  (unit: string): Translate =>
  (c) => {
    const base = unit === 'week' ? `(date_trunc('day', ${c.arg(0)}) - to_days(CAST(dayofweek(${c.arg(0)}) AS INTEGER)))` : `date_trunc('${unit}', ${c.arg(0)})`;
    if (c.args.length < 2) return base;
    const step = unit === 'week' ? `to_days(CAST(7 * ${c.arg(1)} AS INTEGER))` : `to_${unit}s(CAST(${c.arg(1)} AS INTEGER))`;
    return `(${base} + ${step})`;
  };

/** endofX(date, offset): one tick (here one microsecond) before the next period's start. */
const endOf =
  (unit: string): Translate =>
  (c) => {
    const start = startOf(unit)(c);
    const next = unit === 'week' ? 'to_days(7)' : `to_${unit}s(1)`;
    return `(${start} + ${next} - INTERVAL 1 MICROSECOND)`;
  };

const FUNCTIONS: Record<string, Translate> = {
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
  parse_json: (c) =>
    typeOf(c.args[0] as KNode) === 'dynamic'
      ? c.arg(0)
      : `(CASE WHEN ${c.as(0, 'string')} = '' THEN NULL WHEN json_valid(${c.as(0, 'string')}) THEN CAST(${c.as(0, 'string')} AS JSON) ELSE to_json(${c.as(0, 'string')}) END)`,
  todynamic: (c) => FUNCTIONS['parse_json']!(c),
  bag_pack: (c) => `json_object(${c.args.map((_, i) => (i % 2 === 0 ? c.as(i, 'string') : toDynamic(c.arg(i), typeOf(c.args[i] as KNode)))).join(', ')})`,
  pack: (c) => FUNCTIONS['bag_pack']!(c),
  pack_array: (c) => `json_array(${c.args.map((arg, i) => toDynamic(c.arg(i), typeOf(arg))).join(', ')})`,
  array_length: (c) => `CASE WHEN json_type(${c.arg(0)}) = 'ARRAY' THEN CAST(json_array_length(${c.arg(0)}) AS BIGINT) END`,
  ago: (c) => `(now()::TIMESTAMP - to_microseconds(CAST(${c.arg(0)} // 10 AS BIGINT)))`,
  now: (c) => (c.args.length ? `(now()::TIMESTAMP + to_microseconds(CAST(${c.arg(0)} // 10 AS BIGINT)))` : 'now()::TIMESTAMP'),
  bin: (c) => binSql(c.arg(0), typeOf(c.args[0] as KNode), c.arg(1), typeOf(c.args[1] as KNode)),
  floor: (c) => binSql(c.arg(0), typeOf(c.args[0] as KNode), c.arg(1), typeOf(c.args[1] as KNode)),
  startofday: startOf('day'),
  startofmonth: startOf('month'),
  startofyear: startOf('year'),
  startofweek: startOf('week'),
  endofday: endOf('day'),
  endofmonth: endOf('month'),
  endofyear: endOf('year'),
  endofweek: endOf('week'),
  dayofweek: (c) => `(CAST(dayofweek(${c.arg(0)}) AS BIGINT) * 864000000000)`,
  getyear: (c) => `CAST(year(${c.arg(0)}) AS BIGINT)`,
  getmonth: (c) => `CAST(month(${c.arg(0)}) AS BIGINT)`,
  dayofmonth: (c) => `CAST(day(${c.arg(0)}) AS BIGINT)`,
  hourofday: (c) => `CAST(hour(${c.arg(0)}) AS BIGINT)`,
  datetime_add: (c) => `date_add(${c.arg(2)}, CAST(${c.arg(1)} || ' ' || ${c.as(0, 'string')} AS INTERVAL))`,
  format_datetime: (c) => `strftime(${c.arg(0)}, ${formatPattern(c.args[1] as KNode)})`,
  unixtime_seconds_todatetime: (c) => `make_timestamp(CAST(${c.arg(0)} * 1000000 AS BIGINT))`,
  unixtime_milliseconds_todatetime: (c) => `make_timestamp(CAST(${c.arg(0)} * 1000 AS BIGINT))`,
  totimespan: (c) => {
    const type = typeOf(c.args[0] as KNode);
    if (type === 'string') return stringToTimespan(c.arg(0));
    if (type === 'dynamic')
      return `(CASE WHEN json_type(${c.arg(0)}) = 'VARCHAR' THEN ${stringToTimespan(`(${c.arg(0)} ->> '$')`)} ELSE TRY_CAST(${c.arg(0)} ->> '$' AS BIGINT) END)`;
    return `CAST(${c.arg(0)} AS BIGINT)`;
  },
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
  coalesce: (c) => `coalesce(${c.args.map((_, i) => c.as(i, c.type)).join(', ')})`,
  isnull: (c) => (typeOf(c.args[0] as KNode) === 'string' ? 'FALSE' : `(${c.arg(0)} IS NULL)`),
  isnotnull: (c) => (typeOf(c.args[0] as KNode) === 'string' ? 'TRUE' : `(${c.arg(0)} IS NOT NULL)`),
  isempty: (c) => (typeOf(c.args[0] as KNode) === 'string' ? `coalesce(${c.arg(0)} = '', TRUE)` : `(${c.arg(0)} IS NULL)`),
  isnotempty: (c) => (typeOf(c.args[0] as KNode) === 'string' ? `coalesce(${c.arg(0)} <> '', FALSE)` : `(${c.arg(0)} IS NOT NULL)`),
  not: (c) => `(NOT ${c.arg(0)})`,
  abs: (c) => `abs(${c.arg(0)})`,
  round: (c) => `round(${c.arg(0)}, ${c.args.length > 1 ? c.arg(1) : '0'})`,
  sqrt: (c) => `sqrt(${c.arg(0)})`,
  pow: (c) => `pow(${c.arg(0)}, ${c.arg(1)})`,
  log: (c) => `ln(${c.arg(0)})`,
  log10: (c) => `log10(${c.arg(0)})`,
  exp: (c) => `exp(${c.arg(0)})`,
  max_of: (c) => `greatest(${c.args.map((_, i) => c.as(i, c.type)).join(', ')})`,
  min_of: (c) => `least(${c.args.map((_, i) => c.as(i, c.type)).join(', ')})`,
  hash: (c) => `CAST(hash(${c.arg(0)}) AS BIGINT)`,
  strrep: (c) => `repeat(${c.as(0, 'string')}, CAST(${c.arg(1)} AS BIGINT))`,
  countof: (c) =>
    c.args.length > 2
      ? `CAST(len(regexp_extract_all(${c.as(0, 'string')}, ${c.as(1, 'string')})) AS BIGINT)`
      : `CAST(len(string_split(${c.as(0, 'string')}, ${c.as(1, 'string')})) - 1 AS BIGINT)`,
  isnan: (c) => `isnan(${c.arg(0)})`,
};

/** Kusto format_datetime patterns (yyyy-MM-dd HH:mm:ss.fff) as strftime patterns; only constant patterns. */
function formatPattern(node: KNode): string {
  const token = child(node, 'Token');
  if (kindOf(node) !== 'StringLiteralExpression' || !token) throw unsupported(node, 'format_datetime with a non-constant format');
  const text = token.ValueText ?? '';
  const parts: Record<string, string> = {
    yyyy: '%Y',
    yy: '%y',
    MM: '%m',
    dd: '%d',
    HH: '%H',
    hh: '%I',
    mm: '%M',
    ss: '%S',
    fffffff: '%f0',
    ffffff: '%f',
    fff: '%g',
    tt: '%p',
    M: '%-m',
    d: '%-d',
    H: '%-H',
    h: '%-I',
    m: '%-M',
    s: '%-S',
  };
  let out = '';
  let index = 0;
  while (index < text.length) {
    const key = Object.keys(parts).find((candidate) => text.startsWith(candidate, index));
    if (key) {
      out += parts[key];
      index += key.length;
    } else {
      out += text[index] === '%' ? '%%' : text[index];
      index += 1;
    }
  }
  return str(out);
}

export function callFunction(node: KNode, scope: ScalarScope): string {
  const name = (child(node, 'Name') as unknown as { SimpleName: string }).SimpleName;
  const translate = FUNCTIONS[name];
  if (!translate) throw new ServiceError('kql_error', `unsupported function ${name}()`, { function: name });
  const args = children(child(node, 'ArgumentList') as KNode, 'Expressions');
  const call: Call = {
    node,
    args,
    type: typeOf(node),
    arg: (index) => scalar(args[index] as KNode, scope),
    as: (index, type) => {
      const arg = args[index] as KNode;
      const sql = scalar(arg, scope);
      const from = typeOf(arg);
      if (from === 'dynamic' && type !== 'dynamic') return fromDynamic(sql, type);
      if (type === 'dynamic' && from !== 'dynamic') return toDynamic(sql, from);
      return sql;
    },
  };
  return translate(call);
}
