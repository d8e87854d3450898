/** time.* built-ins (nanoseconds since the epoch; UTC unless a zone is given). */
import { builtinErr } from '../errors.js';
import { normInt, type Value } from '../value.js';
import { num, register, str } from './registry.js';

register('time.now_ns', 0, (_args, ctx) => normInt(ctx.nowNs));

register('time.parse_rfc3339_ns', 1, (args) => {
  const s = str('time.parse_rfc3339_ns', args, 0);
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) throw builtinErr('time.parse_rfc3339_ns', `parsing time ${JSON.stringify(s)} as RFC3339 failed`);
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8]!.toUpperCase()}`);
  if (Number.isNaN(ms)) throw builtinErr('time.parse_rfc3339_ns', `parsing time ${JSON.stringify(s)}: out of range`);
  const frac = BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  return normInt(BigInt(ms) * 1_000_000n + frac);
});

const DUR: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
register('time.parse_duration_ns', 1, (args) => {
  const s = str('time.parse_duration_ns', args, 0);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const body = s.replace(/^[+-]/, '');
  if (!/^((\d+(\.\d+)?)(ns|us|µs|ms|s|m|h))+$/.test(body) && body !== '0')
    throw builtinErr('time.parse_duration_ns', `time: invalid duration ${JSON.stringify(s)}`);
  let total = 0;
  for (const m of body.matchAll(re)) total += Number(m[1]) * DUR[m[2]!]!;
  return s.startsWith('-') ? -total : total;
});

/** [ns, tz] or ns -> Date in UTC plus the offset of a fixed zone (IANA zones use Intl) */
function toParts(fn: string, v: Value): { date: Date; ns: bigint } {
  let ns: Value = v;
  let tz = 'UTC';
  if (Array.isArray(v)) {
    ns = v[0] ?? null;
    if (typeof v[1] === 'string' && v[1] !== '') tz = v[1];
  }
  const n = num(fn, [ns], 0);
  const big = typeof n === 'bigint' ? n : BigInt(Math.trunc(n));
  const ms = Number(big / 1_000_000n) - (big < 0n && big % 1_000_000n !== 0n ? 1 : 0);
  let date = new Date(ms);
  if (tz !== 'UTC' && tz !== 'Local') {
    try {
      const f = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      const p = Object.fromEntries(f.formatToParts(date).map((x) => [x.type, x.value]));
      date = new Date(
        Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second), date.getUTCMilliseconds()),
      );
    } catch {
      throw builtinErr(fn, `unknown time zone ${tz}`);
    }
  }
  return { date, ns: big };
}
/** time.format: RFC 3339 with nanoseconds (Go's RFC3339Nano) in UTC or a fixed zone; custom layouts are not supported */
register('time.format', 1, ([v]) => {
  if (Array.isArray(v) && v.length > 2) throw builtinErr('time.format', 'custom layouts are not supported by this engine');
  const { date, ns } = toParts('time.format', v!);
  const frac = ((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const iso = date.toISOString().slice(0, 19);
  const fracText = frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
  const tz = Array.isArray(v) && typeof v[1] === 'string' && v[1] !== '' && v[1] !== 'UTC' ? zoneOffset(v[1], date, ns) : 'Z';
  return iso + fracText + tz;
});

/** the zone's offset at that instant, as +hh:mm */
function zoneOffset(zone: string, local: Date, ns: bigint): string {
  const utcMs = Number(ns / 1_000_000n);
  const diffMin = Math.round((local.getTime() - utcMs) / 60_000);
  if (diffMin === 0) return 'Z';
  const sign = diffMin < 0 ? '-' : '+';
  const a = Math.abs(diffMin);
  return `${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

register('time.date', 1, ([v]) => {
  const { date } = toParts('time.date', v!);
  return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
});
register('time.clock', 1, ([v]) => {
  const { date } = toParts('time.clock', v!);
  return [date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()];
});
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
register('time.weekday', 1, ([v]) => DAYS[toParts('time.weekday', v!).date.getUTCDay()]!);
register('time.add_date', 4, (args) => {
  const n = num('time.add_date', args, 0);
  const big = typeof n === 'bigint' ? n : BigInt(Math.trunc(n));
  const sub = big % 1_000_000n;
  const d = new Date(Number(big / 1_000_000n));
  d.setUTCFullYear(d.getUTCFullYear() + Number(args[1]), d.getUTCMonth() + Number(args[2]), d.getUTCDate() + Number(args[3]));
  return normInt(BigInt(d.getTime()) * 1_000_000n + sub);
});
register('time.diff', 2, (args) => {
  const a = toParts('time.diff', args[0]!).date;
  const b = toParts('time.diff', args[1]!).date;
  const [x, y] = a > b ? [b, a] : [a, b];
  let years = y.getUTCFullYear() - x.getUTCFullYear();
  let months = y.getUTCMonth() - x.getUTCMonth();
  let days = y.getUTCDate() - x.getUTCDate();
  let secs = (y.getTime() % 86_400_000) / 1000 - (x.getTime() % 86_400_000) / 1000;
  if (secs < 0) {
    secs += 86_400;
    days--;
  }
  if (days < 0) {
    days += new Date(Date.UTC(y.getUTCFullYear(), y.getUTCMonth(), 0)).getUTCDate();
    months--;
  }
  if (months < 0) {
    months += 12;
    years--;
  }
  return [years, months, days, Math.floor(secs / 3600), Math.floor((secs % 3600) / 60), Math.floor(secs % 60)];
});
