/** Kusto's datetime and timespan functions. Datetimes are TIMESTAMPs (microseconds); timespans BIGINT ticks. */
import type { Call, Translate } from './call.js';
import { formatDatetime, formatTimespan } from './formats.js';
import { child, kindOf, type KNode } from './kusto.js';
import { stringToTimespan, typeOf, unsupported } from './scalar.js';
import { duckType } from './sql-text.js';

const TICKS_PER_MICRO = 10;

/** bin() for every binnable type; also used by summarize and make-series. */
function binSql(value: string, valueType: string, size: string, sizeType: string): string {
  if (valueType === 'datetime') {
    // Kusto bins datetimes from 0001-01-01 (62135596800 s before the Unix epoch)
    // a bin under a microsecond (the TIMESTAMP precision) leaves the value as it is
    const micros = sizeType === 'timespan' ? `greatest(CAST(${size} // ${TICKS_PER_MICRO} AS BIGINT), 1)` : `CAST(${size} AS BIGINT)`;
    const shifted = `(epoch_us(${value}) + 62135596800000000)`;
    return `make_timestamp(CAST(floor(${shifted} / ${micros}) * ${micros} - 62135596800000000 AS BIGINT))`;
  }
  if (valueType === 'real' || sizeType === 'real') return `(floor(${value} / ${size}) * ${size})`;
  return `CAST(floor(${value} / ${size}) * ${size} AS ${duckType(valueType)})`;
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

/** make_timespan([days,] hours, minutes [, seconds]): null when a part is out of its range. */
function makeTimespan(c: Call): string {
  const parts = c.args.map((_, i) => `CAST(${c.as(i, 'real')} AS DOUBLE)`);
  const [days, hours, minutes, seconds] = parts.length === 4 ? parts : parts.length === 3 ? ['0', ...parts] : ['0', ...parts, '0'];
  const valid = `${days} >= 0 AND ${hours} BETWEEN 0 AND 23 AND ${minutes} BETWEEN 0 AND 59 AND ${seconds} >= 0 AND ${seconds} < 60`;
  return `(CASE WHEN ${valid} THEN CAST(round(${days} * 864000000000 + ${hours} * 36000000000 + ${minutes} * 600000000 + ${seconds} * 10000000) AS BIGINT) END)`;
}

/** make_datetime(year, month, day [, hour, minute, second]): null when a part is out of its range (DuckDB raises). */
function makeDatetime(c: Call): string {
  const part = (index: number, fallback: string): string =>
    c.args.length > index ? `CAST(${c.arg(index)} AS ${index === 5 ? 'DOUBLE' : 'BIGINT'})` : fallback;
  const [year, month, day, hour, minute, second] = [part(0, '1'), part(1, '1'), part(2, '1'), part(3, '0'), part(4, '0'), part(5, '0')];
  const lastDay = `day(last_day(make_date(CAST(${year} AS INTEGER), CAST(${month} AS INTEGER), 1)))`;
  const valid = `${year} BETWEEN 1 AND 9999 AND ${month} BETWEEN 1 AND 12 AND ${hour} BETWEEN 0 AND 23 AND ${minute} BETWEEN 0 AND 59 AND ${second} >= 0 AND ${second} < 60`;
  return `(CASE WHEN ${valid} AND ${day} BETWEEN 1 AND ${lastDay} THEN make_timestamp(${year}, ${month}, ${day}, ${hour}, ${minute}, ${second}) END)`;
}

export const TIME_FUNCTIONS: Record<string, Translate> = {
  make_timespan: makeTimespan,
  datetime_diff: datetimeDiff,
  datetime_part: datetimePart,
  week_of_year: (c) => `CAST(weekofyear(${c.arg(0)}) AS BIGINT)`,
  weekofyear: (c) => `CAST(weekofyear(${c.arg(0)}) AS BIGINT)`,
  monthofyear: (c) => `CAST(month(${c.arg(0)}) AS BIGINT)`,
  dayofyear: (c) => `CAST(dayofyear(${c.arg(0)}) AS BIGINT)`,
  make_datetime: makeDatetime,
  bin_at: (c) => {
    const type = typeOf(c.args[0] as KNode);
    if (type === 'datetime') {
      const size = typeOf(c.args[1] as KNode) === 'timespan' ? `CAST(${c.arg(1)} // 10 AS BIGINT)` : `CAST(${c.arg(1)} AS BIGINT)`;
      return `make_timestamp(CAST(epoch_us(${c.arg(2)}) + floor((epoch_us(${c.arg(0)}) - epoch_us(${c.arg(2)})) / ${size}) * ${size} AS BIGINT))`;
    }
    const sql = `(${c.arg(2)} + floor((${c.arg(0)} - ${c.arg(2)}) / ${c.arg(1)}) * ${c.arg(1)})`;
    return type === 'real' ? sql : `CAST(${sql} AS ${duckType(type)})`;
  },
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
};
