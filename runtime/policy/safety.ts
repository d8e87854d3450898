/**
 * Safety ordering of body expressions (as OPA's compiler does): an expression runs once the vars
 * it reads are bound by earlier ones; vars it can bind (unification patterns, ref keys, the output
 * argument of a call) do not have to be bound first.
 */
import type { Body, Expr, Term } from './ast.js';
import { collectVars } from './resolve.js';

export type Arity = (target: Term & { t: 'call' }) => number | undefined;

const isGen = (n: string): boolean => n.startsWith('$');

/** vars of a term outside comprehensions, plus comprehension vars also free outside (closures) */
function termVars(t: Term, out: Set<string>, outer: Set<string>): void {
  switch (t.t) {
    case 'var':
      out.add(t.name);
      return;
    case 'ref':
      termVars(t.head, out, outer);
      t.path.forEach((p) => termVars(p, out, outer));
      return;
    case 'array':
    case 'set':
      t.items.forEach((i) => termVars(i, out, outer));
      return;
    case 'object':
      t.items.forEach(([k, v]) => (termVars(k, out, outer), termVars(v, out, outer)));
      return;
    case 'call':
      t.args.forEach((a) => termVars(a, out, outer));
      return;
    case 'acomp':
    case 'scomp':
    case 'ocomp': {
      const inner: string[] = [];
      for (const h of t.t === 'ocomp' ? [t.key, t.value] : [t.head]) collectVars(h, inner);
      for (const ex of t.body) exprAllVars(ex, inner);
      for (const v of inner) if (outer.has(v)) out.add(v);
      return;
    }
    default:
      return;
  }
}

function exprAllVars(ex: Expr, out: string[]): void {
  const e = ex.e;
  const terms: Term[] = [];
  if (e.k === 'term') terms.push(e.term);
  if (e.k === 'unify' || e.k === 'assign') terms.push(e.a, e.b);
  if (e.k === 'somein' || e.k === 'every') terms.push(...(e.key ? [e.key] : []), e.value, e.coll);
  for (const w of ex.with) terms.push(w.value);
  for (const t of terms) collectVars(t, out);
  if (e.k === 'every') for (const inner of e.body) exprAllVars(inner, out);
}

/** vars a term can bind: pattern positions and ref keys (not inside calls' input args) */
function outputs(t: Term, out: Set<string>, arity: Arity, pattern: boolean): void {
  switch (t.t) {
    case 'var':
      if (pattern) out.add(t.name);
      return;
    case 'ref':
      if (t.head.t !== 'var') outputs(t.head, out, arity, false);
      for (const p of t.path) if (p.t === 'var') out.add(p.name);
      else outputs(p, out, arity, false);
      return;
    case 'array':
      t.items.forEach((i) => outputs(i, out, arity, pattern));
      return;
    case 'object':
      t.items.forEach(([, v]) => outputs(v, out, arity, pattern));
      return;
    case 'call': {
      const n = arity(t);
      t.args.forEach((a, i) => outputs(a, out, arity, n !== undefined && i === n));
      return;
    }
    default:
      return;
  }
}

interface Info {
  readonly ex: Expr;
  readonly vars: Set<string>;
  readonly outs: Set<string>;
}

function info(ex: Expr, outer: Set<string>, arity: Arity): Info {
  const vars = new Set<string>();
  const outs = new Set<string>();
  const e = ex.e;
  for (const w of ex.with) termVars(w.value, vars, outer);
  switch (e.k) {
    case 'term':
      termVars(e.term, vars, outer);
      if (!ex.neg) outputs(e.term, outs, arity, false);
      break;
    case 'unify':
    case 'assign':
      termVars(e.a, vars, outer);
      termVars(e.b, vars, outer);
      if (!ex.neg) {
        outputs(e.a, outs, arity, true);
        outputs(e.b, outs, arity, e.k === 'unify');
      }
      break;
    case 'somein':
      if (e.key) termVars(e.key, vars, outer);
      termVars(e.value, vars, outer);
      termVars(e.coll, vars, outer);
      if (!ex.neg) {
        if (e.key) outputs(e.key, outs, arity, true);
        outputs(e.value, outs, arity, true);
        outputs(e.coll, outs, arity, false);
      }
      break;
    case 'every': {
      termVars(e.coll, vars, outer);
      const inner: string[] = [];
      for (const x of e.body) exprAllVars(x, inner);
      for (const v of inner) if (outer.has(v)) vars.add(v);
      const own: string[] = [];
      if (e.key) collectVars(e.key, own);
      collectVars(e.value, own);
      own.forEach((v) => vars.delete(v));
      break;
    }
    case 'some':
      break;
  }
  if (ex.neg) for (const v of vars) if (isGen(v)) outs.add(v);
  return { ex, vars, outs };
}

/** reorders a body so every expression's inputs are bound first; unsafe leftovers keep their order */
export function orderBody(body: Body, bound: Set<string>, arity: Arity): Body {
  if (body.length < 2) return body;
  const outer = new Set<string>();
  for (const ex of body) {
    const vs: string[] = [];
    exprAllVars(ex, vs);
    vs.forEach((v) => outer.add(v));
  }
  const pending = body.map((ex) => info(ex, outer, arity));
  const have = new Set(bound);
  const out: Body = [];
  while (pending.length > 0) {
    let idx = pending.findIndex((p) => ready(p, have));
    if (idx < 0) idx = 0;
    const [p] = pending.splice(idx, 1);
    out.push(p!.ex);
    p!.vars.forEach((v) => have.add(v));
  }
  return out;
}

function objectKeyVars(t: Term, out: Set<string>): void {
  if (t.t === 'object')
    for (const [k, v] of t.items) {
      termVars(k, out, new Set());
      objectKeyVars(v, out);
    }
  if (t.t === 'array') t.items.forEach((i) => objectKeyVars(i, out));
}

function ready(p: Info, have: Set<string>): boolean {
  for (const v of p.vars) if (!have.has(v) && !p.outs.has(v)) return false;
  const e = p.ex.e;
  if (e.k === 'unify') {
    // one side must be evaluable, unless both are composite patterns
    const side = (t: Term): boolean => {
      const vs = new Set<string>();
      termVars(t, vs, new Set());
      const outs = new Set<string>();
      outputs(t, outs, () => undefined, false);
      for (const v of vs) if (!have.has(v) && !outs.has(v)) return false;
      return true;
    };
    const ok = (a: Term, b: Term): boolean => {
      if (side(a) || side(b)) return true;
      if (a.t === 'array' && b.t === 'array') return a.items.length === b.items.length && a.items.every((x, i) => ok(x, b.items[i]!));
      if (a.t === 'object' && b.t === 'object') return a.items.length === b.items.length && a.items.every(([, x], i) => ok(x, b.items[i]![1]));
      return false;
    };
    if (!ok(e.a, e.b)) return false;
    const keys = new Set<string>();
    objectKeyVars(e.a, keys);
    objectKeyVars(e.b, keys);
    for (const v of keys) if (!have.has(v)) return false;
  }
  return true;
}
