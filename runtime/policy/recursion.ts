/**
 * Recursion check (as OPA's compiler does): a rule or function that depends on itself through
 * references into `data` or calls is a compile error, so evaluation always terminates.
 */
import type { Body, Expr, Rule, Term } from './ast.js';
import type { RuleNode } from './compiler.js';
import { RegoError } from './errors.js';

function refsOfTerm(t: Term, out: string[][]): void {
  switch (t.t) {
    case 'ref': {
      if (t.head.t === 'var' && t.head.name === 'data') {
        const prefix: string[] = [];
        for (const p of t.path) {
          // constant keys address children (integers as their string form, as under data)
          if (p.t !== 'val' || (typeof p.v !== 'string' && typeof p.v !== 'number')) break;
          prefix.push(String(p.v));
        }
        out.push(prefix);
      } else refsOfTerm(t.head, out);
      t.path.forEach((p) => refsOfTerm(p, out));
      return;
    }
    case 'var':
      if (t.name === 'data') out.push([]);
      return;
    case 'array':
    case 'set':
      t.items.forEach((i) => refsOfTerm(i, out));
      return;
    case 'object':
      t.items.forEach(([k, v]) => (refsOfTerm(k, out), refsOfTerm(v, out)));
      return;
    case 'acomp':
    case 'scomp':
      refsOfTerm(t.head, out);
      refsOfBody(t.body, out);
      return;
    case 'ocomp':
      refsOfTerm(t.key, out);
      refsOfTerm(t.value, out);
      refsOfBody(t.body, out);
      return;
    case 'call':
      if (t.target?.kind === 'user') out.push(t.target.path);
      t.args.forEach((a) => refsOfTerm(a, out));
      return;
    default:
      return;
  }
}

function refsOfExpr(ex: Expr, out: string[][]): void {
  const e = ex.e;
  if (e.k === 'term') refsOfTerm(e.term, out);
  if (e.k === 'unify' || e.k === 'assign') [e.a, e.b].forEach((t) => refsOfTerm(t, out));
  if (e.k === 'somein' || e.k === 'every') [e.key, e.value, e.coll].forEach((t) => t && refsOfTerm(t, out));
  if (e.k === 'every') refsOfBody(e.body, out);
  // `with` targets are replaced, not read; their values are read
  for (const w of ex.with) refsOfTerm(w.value, out);
}

function refsOfBody(body: Body, out: string[][]): void {
  for (const ex of body) refsOfExpr(ex, out);
}

function refsOfRule(r: Rule): string[][] {
  const out: string[][] = [];
  for (const t of [r.key, r.value, ...(r.args ?? [])]) if (t) refsOfTerm(t, out);
  refsOfBody(r.body, out);
  for (const e of r.elses) {
    refsOfTerm(e.value, out);
    refsOfBody(e.body, out);
  }
  return out;
}

/** rule nodes a data path reaches: the rule node above it, or every rule node below it */
function targets(root: RuleNode, path: string[]): string[] {
  const out: string[] = [];
  let node: RuleNode | undefined = root;
  const at: string[] = [];
  for (const p of path) {
    if (node.rules.length > 0 || node.funcs.length > 0 || node.defaultRule || node.defaultFunc) return [at.join('.')];
    node = node.children.get(p);
    if (!node) return out;
    at.push(p);
  }
  const walk = (n: RuleNode, where: string[]): void => {
    if (n.rules.length > 0 || n.funcs.length > 0 || n.defaultRule || n.defaultFunc) out.push(where.join('.'));
    for (const [k, c] of n.children) walk(c, [...where, k]);
  };
  walk(node, at);
  return out;
}

export function checkRecursion(root: RuleNode, rules: readonly Rule[]): void {
  const deps = new Map<string, Set<string>>();
  const firstRule = new Map<string, Rule>();
  for (const r of rules) {
    const key = r.path!.join('.');
    if (!firstRule.has(key)) firstRule.set(key, r);
    const set = deps.get(key) ?? new Set<string>();
    deps.set(key, set);
    for (const ref of refsOfRule(r)) for (const t of targets(root, ref)) set.add(t);
  }
  const state = new Map<string, 1 | 2>();
  const visit = (key: string, stack: string[]): void => {
    if (state.get(key) === 2) return;
    if (state.get(key) === 1) {
      const cycle = [...stack.slice(stack.indexOf(key)), key].map((k) => `data.${k}`).join(' -> ');
      throw new RegoError('rego_recursion_error', `rule data.${key} is recursive: ${cycle}`, firstRule.get(key)?.loc);
    }
    state.set(key, 1);
    for (const d of deps.get(key) ?? []) visit(d, [...stack, key]);
    state.set(key, 2);
  };
  for (const key of deps.keys()) visit(key, []);
}
