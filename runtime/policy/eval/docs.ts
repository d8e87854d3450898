/** Documents under `data`: base documents merged with rules (virtual documents), and user functions. */
import type { Rule, Term } from '../ast.js';
import type { RuleNode } from '../compiler.js';
import { RegoError } from '../errors.js';
import { RObject, RSet, equal, type Value } from '../value.js';
import type { Ctx, Env, KV } from './context.js';
import { evalBody } from './body.js';
import { evalTerm, ground, lookup, unifyValue, walkValue } from './terms.js';

const conflict = (msg: string, loc?: Term['loc']): RegoError => new RegoError('eval_conflict_error', msg, loc);

/** walks `data` along path[i..] from the root */
export function evalData(path: Term[], i: number, env: Env, ctx: Ctx, k: KV): boolean {
  return walkNode(ctx.compiled.root, ctx.data, [], path, i, env, ctx, k);
}

function patchAt(ctx: Ctx, at: readonly string[]): Value | undefined {
  for (let j = ctx.patches.length - 1; j >= 0; j--) {
    const p = ctx.patches[j]!;
    if (p.path.length === at.length && p.path.every((s, n) => s === at[n])) return p.value;
  }
  return undefined;
}

function walkNode(node: RuleNode | undefined, base: Value | undefined, at: string[], path: Term[], i: number, env: Env, ctx: Ctx, k: KV): boolean {
  if (ctx.patches.length > 0) {
    const patched = patchAt(ctx, at);
    if (patched !== undefined) return walkValue(withPatches(patched, at, ctx), path, i, env, ctx, k);
  }
  if (!node) {
    const b = base ?? (ctx.patches.some((p) => p.path.length > at.length && at.every((s, n) => s === p.path[n])) ? new RObject() : undefined);
    return b === undefined ? false : walkValue(withPatches(b, at, ctx), path, i, env, ctx, k, true);
  }
  if (node.rules.length > 0 || node.defaultRule) {
    const v = nodeValue(node, base, at, ctx);
    return v === undefined ? false : walkValue(v, path, i, env, ctx, k);
  }
  if (i === path.length) {
    const v = nodeValue(node, base, at, ctx);
    return v === undefined ? false : k(v);
  }
  const p = path[i]!;
  if (p.t === 'val') return stepInto(node, base, at, path, i, env, ctx, k, p.v);
  if (p.t === 'var' && !env.has(p.name)) {
    const keys = new Set<string>([...node.children.keys()].filter((c) => !isFuncOnly(node.children.get(c)!)));
    if (base instanceof RObject) for (const key of base.keys()) if (typeof key === 'string') keys.add(key);
    for (const key of keys) if (unifyValue(p, key, env, ctx, () => stepInto(node, base, at, path, i, env, ctx, k, key))) return true;
    return false;
  }
  if (!ground(p, env)) return unifyPathKey(p, node, base, env, ctx, (key) => stepInto(node, base, at, path, i, env, ctx, k, key));
  return evalTerm(p, env, ctx, (key) => stepInto(node, base, at, path, i, env, ctx, k, key));
}

/** one step down the rule tree (and the base documents beside it) */
function stepInto(node: RuleNode, base: Value | undefined, at: string[], path: Term[], i: number, env: Env, ctx: Ctx, k: KV, raw: Value): boolean {
  const key = typeof raw === 'number' || typeof raw === 'bigint' ? String(raw) : raw;
  if (typeof key !== 'string') return base === undefined ? false : walkValue(base, path, i, env, ctx, k);
  let child = node.children.get(key);
  const childBase = base === undefined ? undefined : lookup(base, key);
  if (child && childBase !== undefined && child.rules.length > 0) child = undefined;
  if (!child && childBase === undefined && !ctx.patches.some((p) => p.path.length > at.length && p.path[at.length] === key)) return false;
  return walkNode(child, childBase, [...at, key], path, i + 1, env, ctx, k);
}

function unifyPathKey(p: Term, node: RuleNode, base: Value | undefined, env: Env, ctx: Ctx, step: (key: Value) => boolean): boolean {
  const keys = new Set<string>(node.children.keys());
  if (base instanceof RObject) for (const key of base.keys()) if (typeof key === 'string') keys.add(key);
  for (const key of keys) if (unifyValue(p, key, env, ctx, () => step(key))) return true;
  return false;
}

const isFuncOnly = (n: RuleNode): boolean => n.rules.length === 0 && !n.defaultRule && (n.funcs.length > 0 || n.defaultFunc !== null) && n.children.size === 0;

/** applies `with data.x.y` patches below `at` onto a value */
function withPatches(v: Value, at: readonly string[], ctx: Ctx): Value {
  let out = v;
  for (const p of ctx.patches) {
    if (p.path.length <= at.length || !at.every((s, n) => s === p.path[n])) continue;
    out = setIn(out, p.path.slice(at.length), p.value);
  }
  return out;
}

export function setIn(v: Value, path: readonly string[], value: Value): Value {
  if (path.length === 0) return value;
  const o = new RObject();
  if (v instanceof RObject) for (const [key, x] of v.entries()) o.set(key, x);
  const cur = o.get(path[0]!);
  o.set(path[0]!, setIn(cur ?? new RObject(), path.slice(1), value));
  return o;
}

/** the value of the document at a rule node: its rules, or children merged with base data */
function nodeValue(node: RuleNode, base: Value | undefined, at: string[], ctx: Ctx): Value | undefined {
  const key = at.join('\u0000');
  if (ctx.cache.has(key)) return ctx.cache.get(key);
  if (ctx.stack.has(key)) throw new RegoError('rego_recursion_error', `rule data.${at.join('.')} is recursive`);
  ctx.stack.add(key);
  let v: Value | undefined;
  try {
    v = computeNode(node, base, at, ctx);
  } finally {
    ctx.stack.delete(key);
  }
  if (v !== undefined && ctx.patches.length > 0) v = withPatches(v, at, ctx);
  ctx.cache.set(key, v);
  return v;
}

function computeNode(node: RuleNode, base: Value | undefined, at: string[], ctx: Ctx): Value | undefined {
  const kind = node.rules[0]?.kind ?? node.defaultRule?.kind;
  if (kind === 'complete') {
    let out: Value | undefined;
    for (const r of node.rules) {
      for (const v of ruleValues(r, ctx)) {
        if (out !== undefined && !equal(out, v)) throw conflict('complete rules must not produce multiple outputs', r.loc);
        out = v;
      }
    }
    if (out === undefined && node.defaultRule) evalTerm(node.defaultRule.value, new Map(), ctx, (v) => ((out = v), true));
    return out;
  }
  if (kind === 'set') {
    const out = new RSet();
    for (const r of node.rules) {
      const env: Env = new Map();
      evalBody(r.body, 0, env, ctx, () => evalTerm(r.key!, env, ctx, (v) => (out.add(v), false)));
    }
    return out;
  }
  // partial objects and plain namespaces: children merged with base data
  const out = new RObject();
  if (base instanceof RObject) for (const [key, v] of base.entries()) out.set(key, v);
  for (const r of node.rules) {
    const env: Env = new Map();
    evalBody(r.body, 0, env, ctx, () =>
      evalTerm(r.key!, env, ctx, (key) =>
        evalTerm(r.value, env, ctx, (v) => {
          const prev = out.get(key);
          if (prev !== undefined && !equal(prev, v)) throw conflict('object keys must be unique', r.loc);
          out.set(key, v);
          return false;
        }),
      ),
    );
  }
  for (const [name, child] of node.children) {
    if (isFuncOnly(child)) continue;
    const v = nodeValue(child, base === undefined ? undefined : lookup(base, name), [...at, name], ctx);
    if (v !== undefined && !out.has(name)) out.set(name, v);
  }
  if (kind === 'object' && out.size === 0 && node.children.size === 0) return out;
  return out;
}

/** values of a complete rule: its body, else its else chain in order */
function ruleValues(r: Rule, ctx: Ctx): Value[] {
  const chain = [{ value: r.value, body: r.body }, ...r.elses];
  for (const c of chain) {
    const out: Value[] = [];
    const env: Env = new Map();
    evalBody(c.body, 0, env, ctx, () => evalTerm(c.value, env, ctx, (v) => (out.push(v), false)));
    if (out.length > 0) return out;
  }
  return [];
}

/** calls the user functions at a data path */
export function callUser(path: readonly string[], args: Value[], ctx: Ctx, t: Term): Value | undefined {
  let node: RuleNode | undefined = ctx.compiled.root;
  for (const p of path) node = node?.children.get(p);
  if (!node || (node.funcs.length === 0 && !node.defaultFunc)) {
    // a ref to a non-function value called like a function
    throw new RegoError('rego_type_error', `undefined function data.${path.join('.')}`, t.loc);
  }
  const key = 'f:' + path.join('.');
  let out: Value | undefined;
  for (const r of node.funcs) {
    const params = r.args!;
    if (params.length !== args.length) throw new RegoError('rego_type_error', `function data.${path.join('.')} called with ${args.length} arguments`, t.loc);
    const chain = [{ value: r.value, body: r.body }, ...r.elses];
    for (const c of chain) {
      let found = false;
      const env: Env = new Map();
      const bindArgs = (j: number): boolean =>
        j === params.length
          ? evalBody(c.body, 0, env, ctx, () =>
              evalTerm(c.value, env, ctx, (v) => {
                found = true;
                if (out !== undefined && !equal(out, v)) throw conflict('functions must not produce multiple outputs for same inputs', t.loc);
                out = v;
                return false;
              }),
            )
          : unifyValue(params[j]!, args[j]!, env, ctx, () => bindArgs(j + 1));
      if (ctx.stack.size > 2000) throw new RegoError('rego_recursion_error', `function ${key} recursion too deep`);
      bindArgs(0);
      if (found) break;
    }
  }
  if (out === undefined && node.defaultFunc) evalTerm(node.defaultFunc.value, new Map(), ctx, (v) => ((out = v), true));
  return out;
}
