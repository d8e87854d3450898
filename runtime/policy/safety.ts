/**
 * Safety ordering of body expressions (as OPA's compiler does): an expression runs once the vars
 * it reads are bound by earlier ones; vars it can bind (unification patterns, ref keys, the output
 * argument of a call) do not have to be bound first.
 */
import type { Body, Expr, Term } from './ast.js';
import { RegoError } from './errors.js';
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
      for (const v of nestedNeeds(t.body, t.t === 'ocomp' ? [t.key, t.value] : [t.head])) if (outer.has(v)) out.add(v);
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
}

let currentArity: Arity = () => undefined;

/** vars a nested body (comprehension, every) reads but cannot bind itself: closures over the outer body */
function nestedNeeds(body: Body, heads: Term[]): string[] {
  const all: string[] = [];
  for (const h of heads) collectVars(h, all);
  const outs = new Set<string>();
  for (const ex of body) {
    exprAllVars(ex, all);
    info(ex, new Set(), currentArity).outs.forEach((v) => outs.add(v));
    if (ex.e.k === 'some') ex.e.vars.forEach((v) => outs.add(v));
  }
  return all.filter((v) => !outs.has(v));
}

/** vars a term can bind: pattern positions and ref keys (not inside calls' input args) */
function outputs(t: Term, out: Set<string>, arity: Arity, pattern: boolean): void {
  switch (t.t) {
    case 'var':
      if (pattern) out.add(t.name);
      return;
    case 'ref':
      if (t.head.t !== 'var') outputs(t.head, out, arity, false);
      for (const p of t.path) outputs(p, out, arity, p.t === 'var' || p.t === 'array' || p.t === 'object');
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
      for (const v of nestedNeeds(e.body, [])) if (outer.has(v)) vars.add(v);
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

/**
 * Reorders a body so every expression's inputs are bound first (nested comprehension and `every`
 * bodies too, seeing the outer vars as bound); a var nothing can bind is a compile error.
 */
export function orderBody(input: Body, bound: Set<string>, arity: Arity): Body {
  currentArity = arity;
  const outer = new Set<string>();
  for (const ex of input) {
    const vs: string[] = [];
    exprAllVars(ex, vs);
    vs.forEach((v) => outer.add(v));
  }
  const visible = new Set([...bound, ...outer]);
  const body = input.map((ex) => orderNestedExpr(ex, visible, arity));
  const pending = body.map((ex) => info(ex, outer, arity));
  const have = new Set([...bound, 'data', 'input']);
  const out: Body = [];
  while (pending.length > 0) {
    const idx = pending.findIndex((p) => ready(p, have));
    if (idx < 0) {
      const p = pending[0]!;
      const v = [...p.vars].find((x) => !have.has(x) && !p.outs.has(x)) ?? [...p.vars].find((x) => !have.has(x)) ?? '_';
      throw new RegoError('rego_unsafe_var_error', `var ${v.startsWith('$') ? '_' : v} is unsafe`, p.ex.loc);
    }
    const [p] = pending.splice(idx, 1);
    out.push(p!.ex);
    p!.vars.forEach((v) => have.add(v));
  }
  return out;
}

function orderNestedExpr(ex: Expr, visible: Set<string>, arity: Arity): Expr {
  const t = (x: Term): Term => orderNested(x, visible, arity);
  const e = ex.e;
  switch (e.k) {
    case 'term':
      return { ...ex, e: { k: 'term', term: t(e.term) } };
    case 'unify':
    case 'assign':
      return { ...ex, e: { k: e.k, a: t(e.a), b: t(e.b) } };
    case 'somein':
      return { ...ex, e: { ...e, coll: t(e.coll) } };
    case 'every': {
      const own: string[] = [];
      if (e.key) collectVars(e.key, own);
      collectVars(e.value, own);
      return { ...ex, e: { ...e, coll: t(e.coll), body: orderBody(e.body, new Set([...visible, ...own]), arity) } };
    }
    default:
      return ex;
  }
}

/** orders the comprehension bodies inside a term (rule heads) */
export function orderTerm(x: Term, visible: Set<string>, arity: Arity): Term {
  currentArity = arity;
  return orderNested(x, visible, arity);
}

function orderNested(x: Term, visible: Set<string>, arity: Arity): Term {
  switch (x.t) {
    case 'acomp':
    case 'scomp':
    case 'ocomp':
      return { ...x, body: orderBody(x.body, visible, arity) };
    case 'ref':
      return { ...x, head: orderNested(x.head, visible, arity), path: x.path.map((p) => orderNested(p, visible, arity)) };
    case 'array':
    case 'set':
      return { ...x, items: x.items.map((i) => orderNested(i, visible, arity)) };
    case 'object':
      return { ...x, items: x.items.map(([k, v]) => [orderNested(k, visible, arity), orderNested(v, visible, arity)] as [Term, Term]) };
    case 'call':
      return { ...x, args: x.args.map((a) => orderNested(a, visible, arity)) };
    default:
      return x;
  }
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
