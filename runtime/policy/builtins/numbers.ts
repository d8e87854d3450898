/** Comparison, arithmetic and number built-ins (integers stay exact as bigint beyond 2^53). */
import { builtinErr, typeErr } from '../errors.js';
import { RSet, compare, equal, isInteger, isNumber, normInt, typeName, type Value } from '../value.js';
import { int, num, register, set, str } from './registry.js';

const big = (n: number | bigint): bigint => (typeof n === 'bigint' ? n : BigInt(n));

function intOp(a: number | bigint, b: number | bigint, f: (x: number, y: number) => number, g: (x: bigint, y: bigint) => bigint): number | bigint {
  if (isInteger(a) && isInteger(b)) {
    if (typeof a === 'number' && typeof b === 'number') {
      const r = f(a, b);
      if (Number.isSafeInteger(r)) return r;
    }
    return normInt(g(big(a), big(b)));
  }
  return f(Number(a), Number(b));
}

register('equal', 2, ([a, b]) => equal(a!, b!));
register('neq', 2, ([a, b]) => !equal(a!, b!));
register('lt', 2, ([a, b]) => compare(a!, b!) < 0);
register('lte', 2, ([a, b]) => compare(a!, b!) <= 0);
register('gt', 2, ([a, b]) => compare(a!, b!) > 0);
register('gte', 2, ([a, b]) => compare(a!, b!) >= 0);

register('plus', 2, (args) =>
  intOp(
    num('plus', args, 0),
    num('plus', args, 1),
    (x, y) => x + y,
    (x, y) => x + y,
  ),
);
register('mul', 2, (args) =>
  intOp(
    num('mul', args, 0),
    num('mul', args, 1),
    (x, y) => x * y,
    (x, y) => x * y,
  ),
);
register('minus', 2, (args) => {
  const [a, b] = args;
  if (isNumber(a))
    return intOp(
      a,
      num('minus', args, 1),
      (x, y) => x - y,
      (x, y) => x - y,
    );
  if (a instanceof RSet) {
    const s = set('minus', args, 1);
    return RSet.of([...a.values()].filter((v) => !s.has(v)));
  }
  throw typeErr('minus', 1, 'one of {number, set}', typeName(b === undefined ? null : a!));
});
register('div', 2, (args) => {
  const a = num('div', args, 0);
  const b = num('div', args, 1);
  if (Number(b) === 0) throw builtinErr('div', 'divide by zero');
  if (isInteger(a) && isInteger(b) && (typeof a === 'bigint' || typeof b === 'bigint') && big(a) % big(b) === 0n) return normInt(big(a) / big(b));
  return Number(a) / Number(b);
});
register('rem', 2, (args) => {
  const a = num('rem', args, 0);
  const b = num('rem', args, 1);
  if (!isInteger(a) || !isInteger(b)) throw builtinErr('rem', 'modulo on floating-point number');
  if (Number(b) === 0) throw builtinErr('rem', 'modulo by zero');
  return intOp(
    a,
    b,
    (x, y) => x % y,
    (x, y) => x % y,
  );
});
register('abs', 1, (args) => {
  const a = num('abs', args, 0);
  return typeof a === 'bigint' ? (a < 0n ? -a : a) : Math.abs(a);
});
const rounder = (name: string, f: (x: number) => number): void =>
  register(name, 1, (args) => {
    const a = num(name, args, 0);
    return typeof a === 'bigint' ? a : f(a);
  });
rounder('round', (x) => (x < 0 ? -Math.round(-x) : Math.round(x)));
rounder('ceil', Math.ceil);
rounder('floor', Math.floor);

register('numbers.range', 2, (args) => {
  const a = int('numbers.range', args, 0);
  const b = int('numbers.range', args, 1);
  const out: Value[] = [];
  if (a <= b) for (let i = a; i <= b; i++) out.push(i);
  else for (let i = a; i >= b; i--) out.push(i);
  return out;
});
register('numbers.range_step', 3, (args) => {
  const a = int('numbers.range_step', args, 0);
  const b = int('numbers.range_step', args, 1);
  const s = int('numbers.range_step', args, 2);
  if (s <= 0) throw builtinErr('numbers.range_step', 'step must be a positive integer');
  const out: Value[] = [];
  if (a <= b) for (let i = a; i <= b; i += s) out.push(i);
  else for (let i = a; i >= b; i -= s) out.push(i);
  return out;
});

register('to_number', 1, ([v]) => {
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isNumber(v)) return v;
  if (typeof v === 'string') {
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) || v.trim() !== v)
      throw builtinErr('to_number', `strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
    if (/^[+-]?\d+$/.test(v)) {
      const n = Number(v);
      return Number.isSafeInteger(n) ? n : BigInt(v);
    }
    return Number(v);
  }
  throw typeErr('to_number', 1, 'one of {null, boolean, number, string}', typeName(v!));
});
register('format_int', 2, (args) => {
  const n = num('format_int', args, 0);
  const base = int('format_int', args, 1);
  if (![2, 8, 10, 16].includes(base)) throw builtinErr('format_int', 'operand 2 must be one of {2, 8, 10, 16}');
  const i = typeof n === 'bigint' ? n : BigInt(Math.trunc(n));
  return i.toString(base);
});
register('units.parse_bytes', 1, (args) => parseUnits('units.parse_bytes', str('units.parse_bytes', args, 0), true));
register('units.parse', 1, (args) => parseUnits('units.parse', str('units.parse', args, 0), false));

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  m: 1e6,
  g: 1e9,
  t: 1e12,
  p: 1e15,
  e: 1e18,
  ki: 2 ** 10,
  mi: 2 ** 20,
  gi: 2 ** 30,
  ti: 2 ** 40,
  pi: 2 ** 50,
  ei: 2 ** 60,
};
function parseUnits(fn: string, s: string, bytes: boolean): number | bigint {
  const m = /^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(s.replace(/"/g, ''));
  if (!m) throw builtinErr(fn, 'could not parse units: ' + JSON.stringify(s));
  let unit = m[2]!;
  if (!bytes && unit === 'm') return Number(m[1]) / 1000;
  unit = unit.toLowerCase();
  if (bytes) unit = unit.replace(/b$/, '');
  const mult = UNITS[unit];
  if (mult === undefined) throw builtinErr(fn, 'unknown unit ' + JSON.stringify(m[2]));
  const v = Number(m[1]) * mult;
  return bytes ? Math.trunc(v) : v;
}
