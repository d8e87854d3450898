/** Aggregates, membership and set/array/object built-ins. */
import { builtinErr, typeErr } from '../errors.js';
import { RObject, RSet, compare, equal, isNumber, normInt, typeName, type Value } from '../value.js';
import { arr, int, items, obj, oneOf, register, set } from './registry.js';

register('count', 1, (args) => {
  const v = oneOf('count', args, 0, ['array', 'object', 'set', 'string']);
  if (typeof v === 'string') return [...v].length;
  return Array.isArray(v) ? v.length : (v as RSet | RObject).size;
});
const numbers = (fn: string, args: Value[]): (number | bigint)[] =>
  items(fn, args, 0).map((v) => {
    if (!isNumber(v)) throw typeErr(fn, 1, 'array or set of numbers', typeName(v));
    return v;
  });
const exactSum = (xs: (number | bigint)[], mul: boolean): number | bigint => {
  if (xs.every((x) => typeof x === 'bigint' || Number.isInteger(x))) {
    let acc = mul ? 1n : 0n;
    for (const x of xs) acc = mul ? acc * BigInt(x) : acc + BigInt(x);
    return normInt(acc);
  }
  return xs.reduce<number>((a, x) => (mul ? a * Number(x) : a + Number(x)), mul ? 1 : 0);
};
register('sum', 1, (args) => exactSum(numbers('sum', args), false));
register('product', 1, (args) => exactSum(numbers('product', args), true));
register('max', 1, (args) => {
  const xs = items('max', args, 0);
  return xs.length === 0 ? undefined : xs.reduce((a, b) => (compare(a, b) >= 0 ? a : b));
});
register('min', 1, (args) => {
  const xs = items('min', args, 0);
  return xs.length === 0 ? undefined : xs.reduce((a, b) => (compare(a, b) <= 0 ? a : b));
});
register('sort', 1, (args) => [...items('sort', args, 0)].sort(compare));
register('all', 1, (args) => items('all', args, 0).every((v) => v === true));
register('any', 1, (args) => items('any', args, 0).some((v) => v === true));

register('internal.member_2', 2, ([x, c]) => {
  if (Array.isArray(c)) return c.some((v) => equal(v, x!));
  if (c instanceof RSet) return c.has(x!);
  if (c instanceof RObject) return [...c.entries()].some(([, v]) => equal(v, x!));
  return false;
});
register('internal.member_3', 3, ([k, x, c]) => {
  if (Array.isArray(c)) return typeof k === 'number' && k >= 0 && k < c.length && equal(c[k]!, x!);
  if (c instanceof RObject) return c.has(k!) && equal(c.get(k!)!, x!);
  return false;
});

// sets
register('and', 2, (args) => {
  const a = set('and', args, 0);
  const b = set('and', args, 1);
  return RSet.of([...a.values()].filter((v) => b.has(v)));
});
register('or', 2, (args) => RSet.of([...set('or', args, 0).values(), ...set('or', args, 1).values()]));
register('intersection', 1, (args) => {
  const sets = [...set('intersection', args, 0).values()].map((s, i) => set('intersection', [s], 0) ?? i);
  if (sets.length === 0) return new RSet();
  return RSet.of([...sets[0]!.values()].filter((v) => sets.every((s) => s.has(v))));
});
register('union', 1, (args) => RSet.of([...set('union', args, 0).values()].flatMap((s) => [...set('union', [s], 0).values()])));

// arrays
register('array.concat', 2, (args) => [...arr('array.concat', args, 0), ...arr('array.concat', args, 1)]);
register('array.reverse', 1, (args) => [...arr('array.reverse', args, 0)].reverse());
register('array.slice', 3, (args) => {
  const a = arr('array.slice', args, 0);
  let s = int('array.slice', args, 1);
  let e = int('array.slice', args, 2);
  s = Math.max(0, s);
  e = Math.min(a.length, e);
  return s >= e ? [] : a.slice(s, e);
});

// objects
register('object.get', 3, ([o, key, dflt]) => {
  if (!(o instanceof RObject)) throw typeErr('object.get', 1, 'object', typeName(o!));
  if (Array.isArray(key)) {
    let cur: Value = o;
    for (const p of key) {
      const next: Value | undefined =
        cur instanceof RObject ? cur.get(p) : Array.isArray(cur) && typeof p === 'number' ? cur[p] : cur instanceof RSet && cur.has(p) ? p : undefined;
      if (next === undefined) return dflt!;
      cur = next;
    }
    return cur;
  }
  const hit = o.get(key!);
  return hit === undefined ? dflt! : hit;
});
register('object.keys', 1, (args) => RSet.of(obj('object.keys', args, 0).keys()));
const keysOf = (fn: string, v: Value): Value[] => {
  if (Array.isArray(v)) return v;
  if (v instanceof RSet) return [...v.values()];
  if (v instanceof RObject) return v.keys();
  throw typeErr(fn, 2, 'one of {array, object, set}', typeName(v));
};
register('object.remove', 2, (args) => {
  const o = obj('object.remove', args, 0);
  const drop = RSet.of(keysOf('object.remove', args[1]!));
  return RObject.fromEntries([...o.entries()].filter(([k]) => !drop.has(k)));
});
register('object.filter', 2, (args) => {
  const o = obj('object.filter', args, 0);
  const keep = RSet.of(keysOf('object.filter', args[1]!));
  return RObject.fromEntries([...o.entries()].filter(([k]) => keep.has(k)));
});
function mergeObjects(a: RObject, b: RObject): RObject {
  const out = RObject.fromEntries(a.entries());
  for (const [k, v] of b.entries()) {
    const cur = out.get(k);
    out.set(k, cur instanceof RObject && v instanceof RObject ? mergeObjects(cur, v) : v);
  }
  return out;
}
register('object.union', 2, (args) => mergeObjects(obj('object.union', args, 0), obj('object.union', args, 1)));
register('object.union_n', 1, (args) =>
  arr('object.union_n', args, 0).reduce<RObject>((acc, o, i) => {
    if (!(o instanceof RObject)) throw typeErr('object.union_n', 1, 'array of objects', `${typeName(o)} at ${i}`);
    return mergeObjects(acc, o);
  }, new RObject()),
);
register('object.subset', 2, ([a, b]) => subset(a!, b!));
function subset(sup: Value, sub: Value): boolean {
  if (sup instanceof RObject && sub instanceof RObject)
    return [...sub.entries()].every(([k, v]) => {
      const s = sup.get(k);
      return s !== undefined && (s instanceof RObject && v instanceof RObject ? subset(s, v) : equal(s, v));
    });
  if (sup instanceof RSet && sub instanceof RSet) return [...sub.values()].every((v) => sup.has(v));
  if (Array.isArray(sup) && Array.isArray(sub)) {
    for (let i = 0; i + sub.length <= sup.length; i++) if (sub.every((v, j) => equal(v, sup[i + j]!))) return true;
    return sub.length === 0;
  }
  if (sup instanceof RSet && Array.isArray(sub)) return sub.every((v) => sup.has(v));
  throw builtinErr('object.subset', 'both arguments must be objects, sets or arrays');
}

// types
const is = (t: string) => (args: Value[]) => typeName(args[0]!) === t;
for (const t of ['number', 'string', 'boolean', 'array', 'set', 'object', 'null']) register(`is_${t}`, 1, is(t));
register('type_name', 1, ([v]) => typeName(v!));
