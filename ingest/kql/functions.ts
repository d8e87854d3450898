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
import { formatDatetime, formatTimespan } from './formats.js';
import { ORD } from './relation.js';
import { duckType, ident, str } from './sql-text.js';

interface Call {
  readonly node: KNode;
  readonly scope: ScalarScope;
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

/** A dynamic array's elements as a DuckDB JSON[] list (NULL when not an array). */
const elementsOf = (sql: string): string => `(CASE WHEN json_type(${sql}) = 'ARRAY' THEN CAST(json_extract(${sql}, '$[*]') AS JSON[]) END)`;

/** A list back to a dynamic array. */
const arrayOf = (list: string): string => `to_json(${list})`;

/** The Kusto type name of a value (gettype). */
function typeName(c: Call): string {
  const type = typeOf(c.args[0] as KNode);
  if (type !== 'dynamic') return str(type === 'int' ? 'int' : type);
  const v = c.arg(0);
  return `(CASE json_type(${v}) WHEN 'NULL' THEN 'null' WHEN 'OBJECT' THEN 'dictionary' WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string' WHEN 'BIGINT' THEN 'long' WHEN 'UBIGINT' THEN 'long' WHEN 'DOUBLE' THEN 'real' WHEN 'BOOLEAN' THEN 'bool' ELSE 'null' END)`;
}

/** Kusto sort order of array elements: numbers, then strings, nulls last. */
const sortArray = (c: Call, direction: 'ASC' | 'DESC'): string => {
  const list = elementsOf(c.as(0, 'dynamic'));
  const nulls = c.args.length > 1 ? `CASE WHEN ${c.arg(1)} THEN 'NULLS FIRST' ELSE 'NULLS LAST' END` : null;
  void nulls;
  return arrayOf(
    `list_transform(list_sort(list_transform(${list}, e -> {'n': TRY_CAST(e AS DOUBLE), 's': CASE WHEN json_type(e) = 'VARCHAR' THEN e ->> '$' END, 'e': e}), '${direction}', 'NULLS LAST'), x -> x.e)`,
  );
};

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

/** array_slice(a, start, end): inclusive bounds, negative counting from the end. */
function arraySlice(c: Call): string {
  const list = elementsOf(c.as(0, 'dynamic'));
  const n = `len(${list})`;
  const start = `(CASE WHEN ${c.arg(1)} < 0 THEN greatest(${n} + ${c.arg(1)}, 0) ELSE ${c.arg(1)} END)`;
  const end = `(CASE WHEN ${c.arg(2)} < 0 THEN ${n} + ${c.arg(2)} ELSE least(${c.arg(2)}, ${n} - 1) END)`;
  return `(CASE WHEN ${list} IS NULL THEN NULL WHEN ${start} > ${end} THEN CAST('[]' AS JSON) ELSE to_json(list_slice(${list}, ${start} + 1, ${end} + 1)) END)`;
}

const DATETIME_PARTS: Record<string, string> = {
  year: 'year',
  quarter: 'quarter',
  month: 'month',
  day: 'day',
  hour: 'hour',
  minute: 'minute',
  second: 'second',
  millisecond: 'millisecond',
  microsecond: 'microsecond',
};

function constantText(node: KNode, what: string): string {
  const token = child(node, 'Token');
  if (kindOf(node) !== 'StringLiteralExpression' || !token) throw unsupported(node, `${what} with a non-constant part`);
  return (token.ValueText ?? '').toLowerCase();
}

function datetimeDiff(c: Call): string {
  const part = constantText(c.args[0] as KNode, 'datetime_diff');
  const a = c.arg(1);
  const b = c.arg(2);
  if (part === 'week') {
    const sunday = (d: string): string => `(date_trunc('day', ${d}) - to_days(CAST(dayofweek(${d}) AS INTEGER)))`;
    return `CAST(date_diff('day', ${sunday(b)}, ${sunday(a)}) // 7 AS BIGINT)`;
  }
  if (part === 'nanosecond') return `CAST((epoch_us(${a}) - epoch_us(${b})) * 1000 AS BIGINT)`;
  const unit = DATETIME_PARTS[part];
  if (!unit) throw unsupported(c.node, `datetime_diff part ${part}`);
  return `CAST(date_diff('${unit}', ${b}, ${a}) AS BIGINT)`;
}

function datetimePart(c: Call): string {
  const part = constantText(c.args[0] as KNode, 'datetime_part');
  const d = c.arg(1);
  const parts: Record<string, string> = {
    year: `year(${d})`,
    quarter: `quarter(${d})`,
    month: `month(${d})`,
    week_of_year: `weekofyear(${d})`,
    weekofyear: `weekofyear(${d})`,
    day: `day(${d})`,
    dayofyear: `dayofyear(${d})`,
    hour: `hour(${d})`,
    minute: `minute(${d})`,
    second: `second(${d})`,
    millisecond: `millisecond(${d}) % 1000`,
    microsecond: `microsecond(${d}) % 1000000`,
    nanosecond: `(microsecond(${d}) % 1000000) * 1000`,
  };
  const sql = parts[part];
  if (!sql) throw unsupported(c.node, `datetime_part part ${part}`);
  return `CAST(${sql} AS BIGINT)`;
}

const math =
  (fn: string): Translate =>
  (c) =>
    `${fn}(CAST(${c.as(0, 'real')} AS DOUBLE))`;

const FUNCTIONS: Record<string, Translate> = {
  gettype: typeName,
  datetime_diff: datetimeDiff,
  datetime_part: datetimePart,
  string_size: (c) => `CAST(octet_length(encode(${c.as(0, 'string')})) AS BIGINT)`,
  bag_keys: (c) => `(CASE WHEN json_type(${c.arg(0)}) = 'OBJECT' THEN to_json(json_keys(${c.arg(0)})) END)`,
  bag_merge: (c) => {
    const bags = c.args.map((_, i) => c.as(i, 'dynamic')).reverse();
    return `json_merge_patch(${bags.map((bag) => `coalesce(CASE WHEN json_type(${bag}) = 'OBJECT' THEN ${bag} END, CAST('{}' AS JSON))`).join(', ')})`;
  },
  array_concat: (c) => {
    const lists = c.args.map((_, i) => elementsOf(c.as(i, 'dynamic')));
    return `(CASE WHEN ${lists.map((list) => `${list} IS NULL`).join(' AND ')} THEN NULL ELSE to_json(${lists.map((list) => `coalesce(${list}, CAST([] AS JSON[]))`).reduce((a, b) => `list_concat(${a}, ${b})`)}) END)`;
  },
  array_slice: arraySlice,
  array_reverse: (c) => `to_json(list_reverse(${elementsOf(c.as(0, 'dynamic'))}))`,
  array_sum: (c) => `list_sum(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> TRY_CAST(e AS DOUBLE)))`,
  array_sort_asc: (c) => sortArray(c, 'ASC'),
  array_sort_desc: (c) => sortArray(c, 'DESC'),
  array_index_of: (c) =>
    `coalesce(list_position(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> CAST(e AS VARCHAR)), CAST(${c.as(1, 'dynamic')} AS VARCHAR)) - 1, -1)`,
  set_has_element: (c) => `list_contains(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> CAST(e AS VARCHAR)), CAST(${c.as(1, 'dynamic')} AS VARCHAR))`,
  set_union: (c) =>
    `to_json(list_distinct(${c.args.map((_, i) => `coalesce(${elementsOf(c.as(i, 'dynamic'))}, CAST([] AS JSON[]))`).reduce((a, b) => `list_concat(${a}, ${b})`)}))`,
  strcat_array: (c) => `array_to_string(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> ${fromDynamic('e', 'string')}), ${c.as(1, 'string')})`,
  dynamic_to_json: (c) => `coalesce(CAST(${c.as(0, 'dynamic')} AS VARCHAR), 'null')`,
  extract_all: extractAll,
  week_of_year: (c) => `CAST(weekofyear(${c.arg(0)}) AS BIGINT)`,
  weekofyear: (c) => `CAST(weekofyear(${c.arg(0)}) AS BIGINT)`,
  monthofyear: (c) => `CAST(month(${c.arg(0)}) AS BIGINT)`,
  dayofyear: (c) => `CAST(dayofyear(${c.arg(0)}) AS BIGINT)`,
  make_datetime: (c) =>
    `TRY_CAST(make_timestamp(CAST(${c.arg(0)} AS BIGINT), CAST(${c.arg(1)} AS BIGINT), CAST(${c.arg(2)} AS BIGINT), ${c.args.length > 3 ? `CAST(${c.arg(3)} AS BIGINT)` : '0'}, ${c.args.length > 4 ? `CAST(${c.arg(4)} AS BIGINT)` : '0'}, ${c.args.length > 5 ? `CAST(${c.arg(5)} AS DOUBLE)` : '0'}) AS TIMESTAMP)`,
  isinf: (c) => `isinf(${c.arg(0)})`,
  isfinite: (c) => `isfinite(${c.arg(0)})`,
  bin_at: (c) => {
    const type = typeOf(c.args[0] as KNode);
    if (type === 'datetime') {
      const size = typeOf(c.args[1] as KNode) === 'timespan' ? `CAST(${c.arg(1)} // 10 AS BIGINT)` : `CAST(${c.arg(1)} AS BIGINT)`;
      return `make_timestamp(CAST(epoch_us(${c.arg(2)}) + floor((epoch_us(${c.arg(0)}) - epoch_us(${c.arg(2)})) / ${size}) * ${size} AS BIGINT))`;
    }
    const sql = `(${c.arg(2)} + floor((${c.arg(0)} - ${c.arg(2)}) / ${c.arg(1)}) * ${c.arg(1)})`;
    return type === 'real' ? sql : `CAST(${sql} AS ${duckType(type)})`;
  },
  ceiling: (c) => `ceil(${c.arg(0)})`,
  sign: (c) => `sign(${c.arg(0)})`,
  sin: math('sin'),
  cos: math('cos'),
  tan: math('tan'),
  asin: math('asin'),
  acos: math('acos'),
  atan: math('atan'),
  log2: math('log2'),
  degrees: math('degrees'),
  radians: math('radians'),
  pi: () => 'pi()',
  strcmp: (c) => `(CASE WHEN ${c.as(0, 'string')} < ${c.as(1, 'string')} THEN -1 WHEN ${c.as(0, 'string')} > ${c.as(1, 'string')} THEN 1 ELSE 0 END)`,
  hash_sha256: (c) => `sha256(${c.as(0, 'string')})`,
  hash_md5: (c) => `md5(${c.as(0, 'string')})`,
  row_number: (c) => `CAST(row_number() ${over(c, 1)} + ${c.args.length ? c.arg(0) : '1'} - 1 AS BIGINT)`,
  prev: (c) => `lag(${c.arg(0)}, ${c.args.length > 1 ? c.arg(1) : '1'}${c.args.length > 2 ? `, ${c.as(2, c.type)}` : ''}) ${over(c, null)}`,
  next: (c) => `lead(${c.arg(0)}, ${c.args.length > 1 ? c.arg(1) : '1'}${c.args.length > 2 ? `, ${c.as(2, c.type)}` : ''}) ${over(c, null)}`,
  row_cumsum: (c) => `CAST(sum(${c.arg(0)}) ${cumulative(over(c, 1))} AS ${duckType(c.type)})`,
  row_rank_dense: (c) => rowRank(c, true),
  row_rank_min: (c) => rowRank(c, false),
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
  format_datetime: (c) => formatDatetime(c.arg(0), c.args[1] as KNode),
  format_timespan: (c) => formatTimespan(c.arg(0), c.args[1] as KNode),
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

export function callFunction(node: KNode, scope: ScalarScope): string {
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
      return sql;
    },
  };
  return translate(call);
}
