/**
 * SQL text the translator emits for names and constants. Every identifier is
 * double-quoted and every string is single-quoted with its quotes doubled, so
 * nothing a query holds reaches DuckDB as SQL syntax.
 */
import { ServiceError } from '../../runtime/errors.js';

export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export const str = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** DuckDB type of a Kusto scalar type. Timespans are BIGINT ticks (100 ns), as Kusto counts them. */
export function duckType(kustoType: string): string {
  switch (kustoType) {
    case 'long':
      return 'BIGINT';
    case 'int':
      return 'INTEGER';
    case 'real':
    case 'decimal':
      return 'DOUBLE';
    case 'bool':
      return 'BOOLEAN';
    case 'datetime':
      return 'TIMESTAMP';
    case 'timespan':
      return 'BIGINT';
    case 'dynamic':
      return 'JSON';
    default:
      return 'VARCHAR';
  }
}

export const typedNull = (kustoType: string): string => `CAST(NULL AS ${duckType(kustoType)})`;

const UNIT_TICKS: Record<string, bigint> = {
  d: 864_000_000_000n,
  day: 864_000_000_000n,
  days: 864_000_000_000n,
  h: 36_000_000_000n,
  hr: 36_000_000_000n,
  hrs: 36_000_000_000n,
  hour: 36_000_000_000n,
  hours: 36_000_000_000n,
  m: 600_000_000n,
  min: 600_000_000n,
  minute: 600_000_000n,
  minutes: 600_000_000n,
  s: 10_000_000n,
  sec: 10_000_000n,
  second: 10_000_000n,
  seconds: 10_000_000n,
  ms: 10_000n,
  milli: 10_000n,
  millis: 10_000n,
  millisecond: 10_000n,
  milliseconds: 10_000n,
  microsecond: 10n,
  microseconds: 10n,
  tick: 1n,
  ticks: 1n,
};

/** Ticks of a Kusto timespan literal's text (`1d`, `1.5h`, `02:03:04`, `1.02:03:04.5`). */
export function timespanTicks(text: string): bigint | null {
  const value = text.trim();
  if (value === 'null') return null;
  const unit = /^(-?[0-9]+(?:\.[0-9]+)?)\s*([a-z]+)$/i.exec(value);
  if (unit) {
    const per = UNIT_TICKS[(unit[2] as string).toLowerCase()];
    if (per === undefined) throw new ServiceError('kql_error', `unsupported timespan literal ${value}`);
    return decimalTimes(unit[1] as string, per);
  }
  const clock = /^(-?)(?:([0-9]+)\.)?([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]{1,7}))?)?$/.exec(value);
  if (clock) {
    const [, sign, days, hours, minutes, seconds, fraction] = clock;
    let ticks = BigInt(days ?? '0') * UNIT_TICKS['d']! + BigInt(hours ?? '0') * UNIT_TICKS['h']! + BigInt(minutes ?? '0') * UNIT_TICKS['m']!;
    ticks += BigInt(seconds ?? '0') * UNIT_TICKS['s']! + BigInt((fraction ?? '').padEnd(7, '0'));
    return sign === '-' ? -ticks : ticks;
  }
  if (/^-?[0-9]+$/.test(value)) return BigInt(value) * UNIT_TICKS['d']!;
  throw new ServiceError('kql_error', `unsupported timespan literal ${value}`);
}

function decimalTimes(number: string, per: bigint): bigint {
  const negative = number.startsWith('-');
  const [whole, fraction = ''] = number.replace('-', '').split('.');
  const scale = 10n ** BigInt(fraction.length);
  const ticks = ((BigInt(whole as string) * scale + BigInt(fraction || '0')) * per) / scale;
  return negative ? -ticks : ticks;
}

/** Kusto's timespan text: `[-][d.]hh:mm:ss[.fffffff]`. */
export function formatTimespan(ticks: bigint): string {
  const negative = ticks < 0n;
  let rest = negative ? -ticks : ticks;
  const days = rest / UNIT_TICKS['d']!;
  rest %= UNIT_TICKS['d']!;
  const hours = rest / UNIT_TICKS['h']!;
  rest %= UNIT_TICKS['h']!;
  const minutes = rest / UNIT_TICKS['m']!;
  rest %= UNIT_TICKS['m']!;
  const seconds = rest / UNIT_TICKS['s']!;
  const fraction = rest % UNIT_TICKS['s']!;
  const two = (value: bigint): string => value.toString().padStart(2, '0');
  let text = `${days > 0n ? `${days}.` : ''}${two(hours)}:${two(minutes)}:${two(seconds)}`;
  if (fraction > 0n) text += `.${fraction.toString().padStart(7, '0')}`;
  return negative ? `-${text}` : text;
}

/** A datetime literal's text as DuckDB reads a TIMESTAMP (UTC, no zone suffix). */
export function datetimeText(text: string): string {
  return text
    .trim()
    .replace(/Z$/i, '')
    .replace(/([+-]00:?00)$/, '');
}
