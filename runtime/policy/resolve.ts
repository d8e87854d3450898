/**
 * Name resolution: vars naming a rule of the package (or an import) become refs into `data`;
 * calls get their target (a user function's data path or a built-in name).
 */
import type { Body, CallTarget, Expr, ExprBody, Module, Term } from './ast.js';
import { RegoError } from './errors.js';
import { refToStrings } from './parser.js';

export interface Scope {
  readonly pkg: string[];
  readonly ruleNames: Set<string>;
  readonly imports: Map<string, string[]>;
  readonly isBuiltin: (name: string) => boolean;
  readonly arity?: (name: string) => number | undefined;
  readonly locals: Set<string>;
}

const dataRef = (path: string[], loc?: Term['loc']): Term => ({
  t: 'ref',
  head: { t: 'var', name: path[0]! },
  path: path.slice(1).map((v) => ({ t: 'val', v })),
  ...(loc ? { loc } : {}),
});

function resolveCall(fn: string, scope: Scope, loc?: Term['loc']): CallTarget {
  const parts = fn.split('.');
  const head = parts[0]!;
  if (head === 'data') return { kind: 'user', path: parts.slice(1) };
  if (scope.ruleNames.has(head)) return { kind: 'user', path: [...scope.pkg, ...parts] };
  const imp = scope.imports.get(head);
  if (imp && imp[0] === 'data') return { kind: 'user', path: [...imp.slice(1), ...parts.slice(1)] };
  if (scope.isBuiltin(fn)) return { kind: 'builtin', name: fn };
  throw new RegoError('rego_type_error', `undefined function ${fn}`, loc);
}

export function resolveTerm(t: Term, scope: Scope): Term {
  switch (t.t) {
    case 'val':
      return t;
    case 'var': {
      if (scope.locals.has(t.name) || t.name === 'input' || t.name === 'data') return t;
      if (scope.ruleNames.has(t.name)) return dataRef(['data', ...scope.pkg, t.name], t.loc);
      const imp = scope.imports.get(t.name);
      if (imp) return dataRef(imp, t.loc);
      return t;
    }
    case 'ref': {
      const head = resolveTerm(t.head, scope);
      const path = t.path.map((p) => resolveTerm(p, scope));
      if (head.t === 'ref') return { t: 'ref', head: head.head, path: [...head.path, ...path], ...(t.loc ? { loc: t.loc } : {}) };
      return { ...t, head, path };
    }
    case 'array':
    case 'set':
      return { ...t, items: t.items.map((i) => resolveTerm(i, scope)) };
    case 'object':
      return { ...t, items: t.items.map(([k, v]) => [resolveTerm(k, scope), resolveTerm(v, scope)] as [Term, Term]) };
    case 'acomp':
    case 'scomp': {
      const inner = { ...scope, locals: new Set([...scope.locals, ...declared(t.body)]) };
      return { ...t, head: resolveTerm(t.head, inner), body: resolveBody(t.body, inner) };
    }
    case 'ocomp': {
      const inner = { ...scope, locals: new Set([...scope.locals, ...declared(t.body)]) };
      return { ...t, key: resolveTerm(t.key, inner), value: resolveTerm(t.value, inner), body: resolveBody(t.body, inner) };
    }
    case 'call': {
      const local = !t.fn.includes('.') && scope.locals.has(t.fn);
      if (local) throw new RegoError('rego_type_error', `undefined function ${t.fn}`, t.loc);
      const target = resolveCall(t.fn, scope, t.loc);
      if (target.kind === 'builtin') {
        const n = scope.arity?.(target.name);
        if (n !== undefined && n >= 0 && t.args.length !== n && t.args.length !== n + 1) {
          throw new RegoError('rego_type_error', `${t.fn}: arity mismatch: expected ${n} arguments, got ${t.args.length}`, t.loc);
        }
      }
      return { ...t, args: t.args.map((a) => resolveTerm(a, scope)), target };
    }
  }
}

/** vars a body declares (some, :=, some-in, every): they shadow rule names */
export function declared(body: Body): string[] {
  const out: string[] = [];
  for (const ex of body) {
    const e = ex.e;
    if (e.k === 'some') out.push(...e.vars);
    if (e.k === 'assign') collectVars(e.a, out);
    if (e.k === 'somein') {
      if (e.key) collectVars(e.key, out);
      collectVars(e.value, out);
    }
  }
  return out;
}

export function collectVars(t: Term, out: string[]): void {
  switch (t.t) {
    case 'var':
      out.push(t.name);
      return;
    case 'ref':
      collectVars(t.head, out);
      t.path.forEach((p) => collectVars(p, out));
      return;
    case 'array':
    case 'set':
      t.items.forEach((i) => collectVars(i, out));
      return;
    case 'object':
      t.items.forEach(([k, v]) => {
        collectVars(k, out);
        collectVars(v, out);
      });
      return;
    case 'call':
      t.args.forEach((a) => collectVars(a, out));
      return;
    default:
      return;
  }
}

function resolveWithTarget(t: Term, scope: Scope): Term {
  const names = refToStrings(t);
  if (names && (names[0] === 'input' || names[0] === 'data')) return resolveTerm(t, scope);
  if (names) {
    const target = resolveCall(names.join('.'), scope, t.loc);
    return { t: 'call', fn: names.join('.'), args: [], target, ...(t.loc ? { loc: t.loc } : {}) };
  }
  return resolveTerm(t, scope);
}

/** a with-value naming a function (`with f as g`) is kept as a function reference */
function resolveWithValue(t: Term, scope: Scope): Term {
  const names = refToStrings(t);
  if (names && !scope.locals.has(names[0]!) && names[0] !== 'input') {
    try {
      const target = resolveCall(names.join('.'), scope, t.loc);
      if (target.kind === 'builtin' || (names.length > 0 && (scope.ruleNames.has(names[0]!) || names[0] === 'data'))) {
        return { t: 'call', fn: names.join('.'), args: [], target, ...(t.loc ? { loc: t.loc } : {}) };
      }
    } catch {
      /* not a function: a value */
    }
  }
  return resolveTerm(t, scope);
}

function resolveExpr(ex: Expr, scope: Scope): Expr {
  const e = ex.e;
  let out: ExprBody;
  switch (e.k) {
    case 'term':
      out = { k: 'term', term: resolveTerm(e.term, scope) };
      break;
    case 'unify':
    case 'assign':
      out = { k: e.k, a: resolveTerm(e.a, scope), b: resolveTerm(e.b, scope) };
      break;
    case 'some':
      out = e;
      break;
    case 'somein':
      out = { k: 'somein', key: e.key ? resolveTerm(e.key, scope) : null, value: resolveTerm(e.value, scope), coll: resolveTerm(e.coll, scope) };
      break;
    case 'every': {
      const vars: string[] = [];
      if (e.key) collectVars(e.key, vars);
      collectVars(e.value, vars);
      const inner = { ...scope, locals: new Set([...scope.locals, ...vars, ...declared(e.body)]) };
      out = { k: 'every', key: e.key, value: e.value, coll: resolveTerm(e.coll, scope), body: resolveBody(e.body, inner) };
      break;
    }
  }
  return { ...ex, e: out, with: ex.with.map((w) => ({ target: resolveWithTarget(w.target, scope), value: resolveWithValue(w.value, scope) })) };
}

export function resolveBody(body: Body, scope: Scope): Body {
  const assigned = new Set<string>();
  for (const ex of body) {
    if (ex.e.k !== 'assign') continue;
    const vs: string[] = [];
    collectVars(ex.e.a, vs);
    for (const v of vs) {
      if (assigned.has(v) && !v.startsWith('$')) throw new RegoError('rego_compile_error', `var ${v} assigned above`, ex.loc);
      assigned.add(v);
    }
  }
  return body.map((ex) => resolveExpr(ex, scope));
}

export function moduleScope(
  m: Module,
  ruleNames: Set<string>,
  isBuiltin: (n: string) => boolean,
  arity?: (n: string) => number | undefined,
): Omit<Scope, 'locals'> {
  const imports = new Map<string, string[]>();
  for (const imp of m.imports) {
    const names = refToStrings(imp.path);
    if (names) imports.set(imp.alias, names);
  }
  return { pkg: m.pkg, ruleNames, imports, isBuiltin, ...(arity ? { arity } : {}) };
}
