/** Terms: evaluation (refs enumerate unbound keys), unification and calls. */
import type { Term } from '../ast.js';
import { BuiltinError, RegoError } from '../errors.js';
import { RObject, RSet, equal, isInteger, type Value } from '../value.js';
import { callBuiltin } from '../builtins/index.js';
import type { Ctx, Env, K, KV } from './context.js';
import { evalBody } from './body.js';
import { callUser, evalData } from './docs.js';

const unsafe = (name: string, t: Term): never => {
  throw new RegoError('rego_unsafe_var_error', `var ${name} is unsafe`, t.loc);
};

/** true when evaluating t cannot leave a var unbound (vars as ref keys are enumerated) */
export function ground(t: Term, env: Env): boolean {
  switch (t.t) {
    case 'val':
      return true;
    case 'var':
      return env.has(t.name) || t.name === 'input' || t.name === 'data';
    case 'ref':
      return (t.head.t === 'var' ? ground(t.head, env) : ground(t.head, env)) && t.path.every((p) => p.t === 'var' || p.t === 'array' || ground(p, env));
    case 'array':
    case 'set':
      return t.items.every((i) => ground(i, env));
    case 'object':
      return t.items.every(([k, v]) => ground(k, env) && ground(v, env));
    case 'call':
      return t.args.every((a) => ground(a, env));
    default:
      return true;
  }
}

export function evalTerm(t: Term, env: Env, ctx: Ctx, k: KV): boolean {
  switch (t.t) {
    case 'val':
      return k(t.v);
    case 'var': {
      const v = env.get(t.name);
      if (v !== undefined) return k(v);
      if (t.name === 'input') return ctx.input === undefined ? false : k(ctx.input);
      if (t.name === 'data') return evalData([], 0, env, ctx, k);
      return unsafe(t.name, t);
    }
    case 'ref':
      return evalRef(t, env, ctx, k);
    case 'array':
      return evalList(t.items, 0, [], env, ctx, (vs) => k(vs));
    case 'set':
      return evalList(t.items, 0, [], env, ctx, (vs) => k(RSet.of(vs)));
    case 'object': {
      const flat = t.items.flat();
      return evalList(flat, 0, [], env, ctx, (vs) => {
        const o = new RObject();
        for (let i = 0; i < vs.length; i += 2) o.set(vs[i]!, vs[i + 1]!);
        return k(o);
      });
    }
    case 'acomp': {
      const out: Value[] = [];
      evalBody(t.body, 0, env, ctx, () => evalTerm(t.head, env, ctx, (v) => (out.push(v), false)));
      return k(out);
    }
    case 'scomp': {
      const out = new RSet();
      evalBody(t.body, 0, env, ctx, () => evalTerm(t.head, env, ctx, (v) => (out.add(v), false)));
      return k(out);
    }
    case 'ocomp': {
      const out = new RObject();
      evalBody(t.body, 0, env, ctx, () =>
        evalTerm(t.key, env, ctx, (kv) =>
          evalTerm(t.value, env, ctx, (vv) => {
            const prev = out.get(kv);
            if (prev !== undefined && !equal(prev, vv)) throw new RegoError('eval_conflict_error', 'object keys must be unique', t.loc);
            out.set(kv, vv);
            return false;
          }),
        ),
      );
      return k(out);
    }
    case 'call':
      return evalCall(t, env, ctx, k);
  }
}

function evalList(items: Term[], i: number, acc: Value[], env: Env, ctx: Ctx, k: (vs: Value[]) => boolean): boolean {
  if (i === items.length) return k(acc.slice());
  return evalTerm(items[i]!, env, ctx, (v) => {
    acc[i] = v;
    return evalList(items, i + 1, acc, env, ctx, k);
  });
}

function evalRef(t: Term & { t: 'ref' }, env: Env, ctx: Ctx, k: KV): boolean {
  const head = t.head;
  if (head.t === 'var' && !env.has(head.name)) {
    if (head.name === 'data') return evalData(t.path, 0, env, ctx, k);
    if (head.name === 'input') return ctx.input === undefined ? false : walkValue(ctx.input, t.path, 0, env, ctx, k);
  }
  return evalTerm(head, env, ctx, (v) => walkValue(v, t.path, 0, env, ctx, k));
}

/** one step into a collection; undefined when absent */
export function lookup(v: Value, key: Value, dataKeys = false): Value | undefined {
  if (Array.isArray(v)) {
    if (typeof key === 'number' && isInteger(key) && key >= 0 && key < v.length) return v[key];
    return undefined;
  }
  if (v instanceof RObject) {
    const hit = v.get(key);
    return hit !== undefined || !dataKeys || (typeof key !== 'number' && typeof key !== 'bigint') ? hit : v.get(String(key));
  }
  if (v instanceof RSet) return v.has(key) ? key : undefined;
  return undefined;
}

/** key/value pairs of a collection (sets: the element twice) */
export function entries(v: Value): [Value, Value][] {
  if (Array.isArray(v)) return v.map((x, i) => [i, x]);
  if (v instanceof RObject) return [...v.entries()];
  if (v instanceof RSet) return [...v.values()].map((x) => [x, x]);
  return [];
}

/** walks a value along path[i..]; under `data` (dataKeys) integer keys also address string keys */
export function walkValue(v: Value, path: Term[], i: number, env: Env, ctx: Ctx, k: KV, dataKeys = false): boolean {
  if (i === path.length) return k(v);
  const p = path[i]!;
  if (ground(p, env) && p.t !== 'var') {
    return evalTerm(p, env, ctx, (key) => {
      const next = lookup(v, key, dataKeys);
      return next === undefined ? false : walkValue(next, path, i + 1, env, ctx, k, dataKeys);
    });
  }
  if (p.t === 'var' && env.has(p.name)) {
    const next = lookup(v, env.get(p.name)!, dataKeys);
    return next === undefined ? false : walkValue(next, path, i + 1, env, ctx, k, dataKeys);
  }
  for (const [key, next] of entries(v)) {
    if (unifyValue(p, key, env, ctx, () => walkValue(next, path, i + 1, env, ctx, k, dataKeys))) return true;
  }
  return false;
}

/** binds a var for the continuation and unbinds it after */
function bind(env: Env, name: string, v: Value, k: K): boolean {
  env.set(name, v);
  try {
    return k();
  } finally {
    env.delete(name);
  }
}

/** unify a pattern term with a value */
export function unifyValue(p: Term, v: Value, env: Env, ctx: Ctx, k: K): boolean {
  switch (p.t) {
    case 'var': {
      const cur = env.get(p.name);
      if (cur !== undefined) return equal(cur, v) && k();
      if (p.name === 'input' || p.name === 'data') return evalTerm(p, env, ctx, (x) => equal(x, v) && k());
      return bind(env, p.name, v, k);
    }
    case 'array':
      if (!Array.isArray(v) || v.length !== p.items.length) return false;
      return unifyItems(p.items, v, 0, env, ctx, k);
    case 'object': {
      if (!(v instanceof RObject) || v.size !== p.items.length) return false;
      const pats: Term[] = [];
      const vals: Value[] = [];
      for (const [kt, vt] of p.items) {
        if (!ground(kt, env)) return unsafe('object key', kt);
        let key: Value | undefined;
        evalTerm(kt, env, ctx, (x) => ((key = x), true));
        if (key === undefined) return false;
        const got = v.get(key);
        if (got === undefined) return false;
        pats.push(vt);
        vals.push(got);
      }
      return unifyItems(pats, vals, 0, env, ctx, k);
    }
    default:
      return evalTerm(p, env, ctx, (x) => equal(x, v) && k());
  }
}

function unifyItems(pats: Term[], vals: Value[], i: number, env: Env, ctx: Ctx, k: K): boolean {
  if (i === pats.length) return k();
  return unifyValue(pats[i]!, vals[i]!, env, ctx, () => unifyItems(pats, vals, i + 1, env, ctx, k));
}

/** unify two terms: evaluate the ground side, match the other; composite patterns pairwise */
export function unify(a: Term, b: Term, env: Env, ctx: Ctx, k: K): boolean {
  if (ground(a, env)) return evalTerm(a, env, ctx, (va) => unifyValue(b, va, env, ctx, k));
  if (ground(b, env)) return evalTerm(b, env, ctx, (vb) => unifyValue(a, vb, env, ctx, k));
  if (a.t === 'array' && b.t === 'array') {
    if (a.items.length !== b.items.length) return false;
    const step = (i: number): boolean => (i === a.items.length ? k() : unify(a.items[i]!, b.items[i]!, env, ctx, () => step(i + 1)));
    return step(0);
  }
  if (a.t === 'object' && b.t === 'object') {
    if (a.items.length !== b.items.length) return false;
    const bv = new Map<string, Term>();
    const pairs: [Term, Term][] = [];
    for (const [kt, vt] of b.items) if (kt.t === 'val') bv.set(JSON.stringify(kt.v), vt);
    for (const [kt, vt] of a.items) {
      const other = kt.t === 'val' ? bv.get(JSON.stringify(kt.v)) : undefined;
      if (!other) return false;
      pairs.push([vt, other]);
    }
    const step = (i: number): boolean => (i === pairs.length ? k() : unify(pairs[i]![0], pairs[i]![1], env, ctx, () => step(i + 1)));
    return step(0);
  }
  const v = a.t === 'var' ? a : b.t === 'var' ? b : a;
  return unsafe(v.t === 'var' ? v.name : 'expression', v);
}

/** calls produce their value; with one extra argument the value is unified with it */
function evalCall(t: Term & { t: 'call' }, env: Env, ctx: Ctx, k: KV): boolean {
  return invoke(t, t.args, env, ctx, k);
}

export function invoke(t: Term & { t: 'call' }, args: Term[], env: Env, ctx: Ctx, k: KV): boolean {
  const target = t.target;
  if (!target) throw new RegoError('rego_type_error', `undefined function ${t.fn}`, t.loc);
  return evalList(args, 0, [], env, ctx, (vals) => {
    const out = apply(target, vals, ctx, t);
    return out === undefined ? false : k(out);
  });
}

function apply(target: NonNullable<(Term & { t: 'call' })['target']>, vals: Value[], ctx: Ctx, t: Term): Value | undefined {
  const mock = ctx.mocks.get(target.kind === 'builtin' ? 'b:' + target.name : 'u:' + target.path.join('.'));
  if (mock) {
    if (mock.kind === 'value') return mock.v;
    // a mock function runs without the mocks of its own target, so it can call the original
    return apply(mock.target, vals, { ...ctx, mocks: without(ctx.mocks, target) }, t);
  }
  if (target.kind === 'user') return callUser(target.path, vals, ctx, t);
  try {
    return callBuiltin(target.name, vals, ctx);
  } catch (err) {
    if (err instanceof BuiltinError && !ctx.strict) return undefined;
    if (err instanceof RegoError && !err.location && t.loc) throw new (err.constructor as typeof RegoError)(err.code, err.detail, t.loc);
    throw err;
  }
}

function without(mocks: Ctx['mocks'], target: NonNullable<(Term & { t: 'call' })['target']>): Ctx['mocks'] {
  const m = new Map(mocks);
  m.delete(target.kind === 'builtin' ? 'b:' + target.name : 'u:' + target.path.join('.'));
  return m;
}
