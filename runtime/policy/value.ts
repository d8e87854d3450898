/**
 * Rego values. Scalars are plain JS values (null, boolean, string, number); integers beyond 2^53
 * stay exact as bigint. Sets and objects are keyed by a canonical string so 1 and 1.0 are one key,
 * as in OPA. Ordering follows OPA's ast.Compare: null < boolean < number < string < array < object < set.
 */
export type Value = null | boolean | number | bigint | string | Value[] | RSet | RObject;

export class RSet {
  readonly items = new Map<string, Value>();
  static of(values: Iterable<Value>): RSet {
    const set = new RSet();
    for (const v of values) set.add(v);
    return set;
  }
  add(v: Value): void {
    const k = keyOf(v);
    if (!this.items.has(k)) this.items.set(k, v);
  }
  has(v: Value): boolean {
    return this.items.has(keyOf(v));
  }
  get size(): number {
    return this.items.size;
  }
  values(): IterableIterator<Value> {
    return this.items.values();
  }
  sorted(): Value[] {
    return [...this.items.values()].sort(compare);
  }
}

export class RObject {
  readonly items = new Map<string, [Value, Value]>();
  static fromEntries(entries: Iterable<[Value, Value]>): RObject {
    const o = new RObject();
    for (const [k, v] of entries) o.set(k, v);
    return o;
  }
  set(k: Value, v: Value): void {
    this.items.set(keyOf(k), [k, v]);
  }
  get(k: Value): Value | undefined {
    return this.items.get(keyOf(k))?.[1];
  }
  has(k: Value): boolean {
    return this.items.has(keyOf(k));
  }
  delete(k: Value): void {
    this.items.delete(keyOf(k));
  }
  get size(): number {
    return this.items.size;
  }
  entries(): IterableIterator<[Value, Value]> {
    return this.items.values();
  }
  keys(): Value[] {
    return [...this.items.values()].map((e) => e[0]);
  }
  sortedEntries(): [Value, Value][] {
    return [...this.items.values()].sort((a, b) => compare(a[0], b[0]));
  }
}

export const isNumber = (v: Value | undefined): v is number | bigint => typeof v === 'number' || typeof v === 'bigint';

/** integers: numbers without a fraction, or bigints */
export const isInteger = (v: Value): boolean => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));

/** bigint back to number when it fits, so small results keep one representation */
export function normInt(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

const numKey = (n: number | bigint): string => (typeof n === 'bigint' ? n.toString() : Object.is(n, -0) ? '0' : String(n));

/** canonical key: equal Rego values have equal keys (a bare string needs no escaping on its own) */
function keyOf(v: Value): string {
  return typeof v === 'string' ? '"' + v : keyInner(v);
}

function keyInner(v: Value): string {
  if (v === null) return 'n';
  switch (typeof v) {
    case 'boolean':
      return v ? 't' : 'f';
    case 'number':
    case 'bigint':
      return '#' + numKey(v);
    case 'string':
      return JSON.stringify(v);
  }
  if (Array.isArray(v)) return '[' + v.map(keyInner).join(',') + ']';
  if (v instanceof RSet) return '<' + [...v.items.values()].map(keyInner).sort().join(',') + '>';
  return (
    '{' +
    [...v.items.values()]
      .map(([k, e]) => keyInner(k) + ':' + keyInner(e))
      .sort()
      .join(',') +
    '}'
  );
}

export const equal = (a: Value, b: Value): boolean => a === b || keyOf(a) === keyOf(b);

const rank = (v: Value): number => {
  if (v === null) return 0;
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
  }
  if (Array.isArray(v)) return 4;
  return v instanceof RObject ? 5 : 6;
};

export function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  // mixed: bigints are huge integers, compare through the exact side when the float is integral
  const fa = typeof a === 'number' ? a : Number(a);
  const fb = typeof b === 'number' ? b : Number(b);
  if (fa !== fb) return fa < fb ? -1 : 1;
  const x = typeof a === 'number' ? (Number.isInteger(a) ? BigInt(a) : null) : a;
  const y = typeof b === 'number' ? (Number.isInteger(b) ? BigInt(b) : null) : b;
  if (x === null || y === null) return 0;
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compare(a: Value, b: Value): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a === b ? 0 : a ? 1 : -1;
    case 2:
      return compareNumbers(a as number, b as number);
    case 3:
      return a! < b! ? -1 : a! > b! ? 1 : 0;
    case 4:
      return compareLists(a as Value[], b as Value[]);
    case 5: {
      const ea = (a as RObject).sortedEntries();
      const eb = (b as RObject).sortedEntries();
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const c = compare(ea[i]![0], eb[i]![0]) || compare(ea[i]![1], eb[i]![1]);
        if (c !== 0) return c;
      }
      return ea.length - eb.length;
    }
    default:
      return compareLists((a as RSet).sorted(), (b as RSet).sorted());
  }
}

function compareLists(a: Value[], b: Value[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compare(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export function typeName(v: Value): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
  }
  if (Array.isArray(v)) return 'array';
  return v instanceof RSet ? 'set' : 'object';
}

/** JSON input to a Rego value (objects keyed by strings) */
export function fromJSON(j: unknown): Value {
  if (j === null || j === undefined) return null;
  if (typeof j === 'boolean' || typeof j === 'string' || typeof j === 'number' || typeof j === 'bigint') return j;
  if (Array.isArray(j)) return j.map(fromJSON);
  if (j instanceof RSet || j instanceof RObject) return j;
  const o = new RObject();
  for (const [k, v] of Object.entries(j as Record<string, unknown>)) if (v !== undefined) o.set(k, fromJSON(v));
  return o;
}

/** Rego value to JSON: sets become sorted arrays, non-string keys are serialised as OPA does */
export function toJSON(v: Value): unknown {
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? Number(v) : v;
  if (Array.isArray(v)) return v.map(toJSON);
  if (v instanceof RSet) return v.sorted().map(toJSON);
  const out: Record<string, unknown> = {};
  for (const [k, e] of v.sortedEntries()) out[typeof k === 'string' ? k : JSON.stringify(toJSON(k))] = toJSON(e);
  return out;
}

/** Rego's text form of a value (sprintf %v, error messages, object keys in JSON) */
export function formatValue(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return '[' + v.map(formatValue).join(', ') + ']';
  if (v instanceof RSet) return v.size === 0 ? 'set()' : '{' + v.sorted().map(formatValue).join(', ') + '}';
  return (
    '{' +
    v
      .sortedEntries()
      .map(([k, e]) => formatValue(k) + ': ' + formatValue(e))
      .join(', ') +
    '}'
  );
}

export function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  return String(n);
}
