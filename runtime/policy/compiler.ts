/**
 * Compiler: resolves names, orders bodies for safety, and indexes rules into a tree by data path
 * (the evaluator walks it next to the base documents).
 */
import type { Body, Module, Rule, Term } from './ast.js';
import { RegoError } from './errors.js';
import { collectVars, declared, moduleScope, resolveBody, resolveTerm, type Scope } from './resolve.js';
import { checkRecursion } from './recursion.js';
import { orderBody, orderTerm, type Arity } from './safety.js';
import { builtinArity, isBuiltin } from './builtins/index.js';

export interface RuleNode {
  readonly children: Map<string, RuleNode>;
  /** complete, partial set and partial object rules defined exactly here */
  readonly rules: Rule[];
  readonly funcs: Rule[];
  defaultRule: Rule | null;
  defaultFunc: Rule | null;
}

const newNode = (): RuleNode => ({ children: new Map(), rules: [], funcs: [], defaultRule: null, defaultFunc: null });

export function nodeAt(root: RuleNode, path: readonly string[]): RuleNode | undefined {
  let n: RuleNode | undefined = root;
  for (const p of path) {
    n = n.children.get(p);
    if (!n) return undefined;
  }
  return n;
}

export interface Compiled {
  readonly root: RuleNode;
  readonly modules: Module[];
}

function staticPath(rule: Rule): string[] {
  return rule.ref.map((t) => {
    if (t.t === 'val' && typeof t.v === 'string') return t.v;
    throw new RegoError('rego_compile_error', 'rule heads with variables before the last key are not supported', rule.loc);
  });
}

function makeArity(root: RuleNode): Arity {
  return (call) => {
    const target = call.target;
    if (!target) return undefined;
    if (target.kind === 'builtin') return builtinArity(target.name);
    const n = nodeAt(root, target.path);
    return n?.funcs[0]?.args?.length ?? n?.defaultFunc?.args?.length;
  };
}

export function compileModules(modules: Module[]): Compiled {
  const root = newNode();
  const pkgRules = new Map<string, Set<string>>();
  for (const m of modules) {
    const key = m.pkg.join('.');
    const names = pkgRules.get(key) ?? new Set<string>();
    for (const r of m.rules) {
      const first = r.ref[0];
      if (first?.t === 'val' && typeof first.v === 'string') names.add(first.v);
    }
    pkgRules.set(key, names);
  }
  const pending: { rule: Rule; scope: Scope; node: RuleNode }[] = [];
  for (const m of modules) {
    let pkgNode = root;
    for (const p of m.pkg) {
      let next = pkgNode.children.get(p);
      if (!next) pkgNode.children.set(p, (next = newNode()));
      pkgNode = next;
    }
    const base = moduleScope(m, pkgRules.get(m.pkg.join('.'))!, isBuiltin, builtinArity);
    for (const r of m.rules) {
      const path = [...m.pkg, ...staticPath(r)];
      r.path = path;
      let node = root;
      for (const p of path) {
        let next = node.children.get(p);
        if (!next) node.children.set(p, (next = newNode()));
        node = next;
      }
      const headVars: string[] = [];
      for (const a of r.args ?? []) collectVars(a, headVars);
      const locals = new Set([...headVars, ...declared(r.body)]);
      pending.push({ rule: r, scope: { ...base, locals }, node });
      if (r.kind === 'func') {
        if (r.isDefault) node.defaultFunc = r;
        else node.funcs.push(r);
      } else if (r.isDefault) {
        if (node.defaultRule) throw new RegoError('rego_type_error', `multiple default rules ${path.join('.')} found`, r.loc);
        node.defaultRule = r;
      } else node.rules.push(r);
    }
  }
  const arity = makeArity(root);
  for (const { rule, scope, node } of pending) {
    const kinds = new Set(node.rules.map((r) => r.kind));
    if (kinds.size > 1) throw new RegoError('rego_type_error', `conflicting rules data.${rule.path!.join('.')} found`, rule.loc);
    const resolved = resolveRule(rule, scope, arity);
    Object.assign(rule, resolved);
  }
  checkRecursion(
    root,
    pending.map((p) => p.rule),
  );
  return { root, modules };
}

function resolveRule(r: Rule, scope: Scope, arity: Arity): Partial<Rule> {
  const argVars: string[] = [];
  for (const a of r.args ?? []) collectVars(a, argVars);
  const bound = new Set(argVars);
  const body = (b: Body): Body => orderBody(resolveBody(b, scope), bound, arity);
  const bodyVars = (b: Body): Set<string> => {
    const vs: string[] = [...bound];
    for (const ex of b) for (const t of exprTerms(ex)) collectVars(t, vs);
    return new Set(vs);
  };
  const visible = bodyVars(r.body);
  const term = (t: Term): Term => orderTerm(resolveTerm(t, scope), visible, arity);
  const out = {
    ref: r.ref,
    key: r.key ? term(r.key) : null,
    value: term(r.value),
    args: r.args ? r.args.map(term) : null,
    body: body(r.body),
    elses: r.elses.map((e) => {
      const s = { ...scope, locals: new Set([...scope.locals, ...declared(e.body)]) };
      return { value: orderTerm(resolveTerm(e.value, s), bodyVars(e.body), arity), body: orderBody(resolveBody(e.body, s), bound, arity), loc: e.loc };
    }),
  };
  checkHead([out.key, out.value], out.body, bound, r);
  for (const e of out.elses) checkHead([e.value], e.body, bound, r);
  return out;
}

function exprTerms(ex: Body[number]): Term[] {
  const e = ex.e;
  if (e.k === 'term') return [e.term];
  if (e.k === 'unify' || e.k === 'assign') return [e.a, e.b];
  if (e.k === 'somein') return [e.key, e.value, e.coll].filter((t): t is Term => t !== null);
  return [];
}

/** every var of a rule head must be bound by its body (or be an argument) */
function checkHead(heads: (Term | null)[], body: Body, bound: Set<string>, r: Rule): void {
  const have = new Set(bound);
  for (const ex of body) {
    const vs: string[] = [];
    for (const t of exprTerms(ex)) collectVars(t, vs);
    if (!ex.neg) vs.forEach((v) => have.add(v));
  }
  for (const h of heads) {
    if (!h) continue;
    const vs: string[] = [];
    collectVars(h, vs);
    // wildcards in a head (`xs[_]`) are enumerated like ref keys
    const bad = vs.find((v) => !have.has(v) && v !== 'input' && v !== 'data' && !v.startsWith('$'));
    if (bad) throw new RegoError('rego_unsafe_var_error', `var ${bad} is unsafe`, r.loc);
  }
}

/** a query is a body in no package: only `data` and `input` name documents */
export function compileQuery(body: Body, compiled: Compiled): Body {
  const scope: Scope = { pkg: [], ruleNames: new Set(), imports: new Map(), isBuiltin, arity: builtinArity, locals: new Set(declared(body)) };
  return orderBody(resolveBody(body, scope), new Set(), makeArity(compiled.root));
}
