/** Bodies: expressions in order with backtracking; `not`, `some ... in`, `every` and `with`. */
import type { Body, Expr, Term } from '../ast.js';
import { nodeAt } from '../compiler.js';
import { RegoError } from '../errors.js';
import { builtinArity } from '../builtins/index.js';
import { RObject, type Value } from '../value.js';
import type { Ctx, Env, K, Mock, Patch } from './context.js';
import { evalData, setIn } from './docs.js';
import { entries, evalTerm, invoke, unify, unifyValue } from './terms.js';

export function evalBody(body: Body, i: number, env: Env, ctx: Ctx, k: K): boolean {
  if (i === body.length) return k();
  if ((++ctx.budget.steps & 1023) === 0 && performance.now() > ctx.budget.deadline) {
    throw new RegoError('eval_cancel_error', 'evaluation exceeded its time budget');
  }
  const ex = body[i]!;
  // inline continuations: no named closures on the hot path
  if (ex.with.length > 0) return evalExpr(ex, env, withCtx(ex, env, ctx), () => evalBody(body, i + 1, env, ctx, k));
  return evalExpr(ex, env, ctx, () => evalBody(body, i + 1, env, ctx, k));
}

function evalExpr(ex: Expr, env: Env, ctx: Ctx, k: K): boolean {
  if (ex.neg) {
    const found = evalPositive(ex, env, ctx, () => true);
    return found ? false : k();
  }
  return evalPositive(ex, env, ctx, k);
}

function evalPositive(ex: Expr, env: Env, ctx: Ctx, k: K): boolean {
  const e = ex.e;
  switch (e.k) {
    case 'term': {
      const t = e.term;
      if (t.t === 'call' && t.target) {
        const n = t.target.kind === 'builtin' ? builtinArity(t.target.name) : userArity(t.target.path, ctx);
        if (n !== undefined && t.args.length === n + 1) {
          const out = t.args[n]!;
          return invoke(t, t.args.slice(0, n), env, ctx, (v) => unifyValue(out, v, env, ctx, k));
        }
      }
      return evalTerm(t, env, ctx, (v) => v !== false && k());
    }
    case 'unify':
      return unify(e.a, e.b, env, ctx, k);
    case 'assign':
      return evalTerm(e.b, env, ctx, (v) => unifyValue(e.a, v, env, ctx, k));
    case 'some':
      return k();
    case 'somein':
      return evalTerm(e.coll, env, ctx, (coll) => {
        for (const [key, val] of entries(coll)) {
          const stop = e.key ? unifyValue(e.key, key, env, ctx, () => unifyValue(e.value, val, env, ctx, k)) : unifyValue(e.value, val, env, ctx, k);
          if (stop) return true;
        }
        return false;
      });
    case 'every':
      return evalTerm(e.coll, env, ctx, (coll) => {
        if (coll === null || typeof coll !== 'object') return false;
        for (const [key, val] of entries(coll)) {
          const ok = e.key
            ? unifyValue(e.key, key, env, ctx, () => unifyValue(e.value, val, env, ctx, () => evalBody(e.body, 0, env, ctx, () => true)))
            : unifyValue(e.value, val, env, ctx, () => evalBody(e.body, 0, env, ctx, () => true));
          if (!ok) return false;
        }
        return k();
      });
  }
}

function userArity(path: readonly string[], ctx: Ctx): number | undefined {
  const n = nodeAt(ctx.compiled.root, path);
  return n?.funcs[0]?.args?.length ?? n?.defaultFunc?.args?.length;
}

const one = (t: Term, env: Env, ctx: Ctx): Value | undefined => {
  let out: Value | undefined;
  evalTerm(t, env, ctx, (v) => ((out = v), true));
  return out;
};

/** the context an expression with `with` modifiers runs in (a fresh cache: results may differ) */
function withCtx(ex: Expr, env: Env, ctx: Ctx): Ctx {
  let input = ctx.input;
  const patches: Patch[] = [...ctx.patches];
  const mocks = new Map<string, Mock>(ctx.mocks);
  for (const w of ex.with) {
    const value = w.value;
    let mock: Mock | undefined = value.t === 'call' && value.args.length === 0 && value.target ? { kind: 'fn', target: value.target } : undefined;
    if (mock?.kind === 'fn' && mock.target.kind === 'user' && userArity(mock.target.path, ctx) === undefined) {
      // a rule (not a function) as replacement: its value
      const path = mock.target.path;
      let v: Value | undefined;
      evalData(
        path.map((p) => ({ t: 'val', v: p })),
        0,
        env,
        ctx,
        (x) => ((v = x), true),
      );
      mock = { kind: 'value', v: v === undefined ? undefinedValue(ex) : v };
    }
    const target = w.target;
    if (target.t === 'call' && target.target) {
      const key = target.target.kind === 'builtin' ? 'b:' + target.target.name : 'u:' + target.target.path.join('.');
      mocks.set(key, mock ?? { kind: 'value', v: defined(one(value, env, ctx), ex) });
      continue;
    }
    const names = pathOf(target);
    if (!names) throw new RegoError('rego_compile_error', 'with keyword target must reference existing input, data, or a function', ex.loc);
    const v = mock ? undefined : one(value, env, ctx);
    if (names[0] === 'input') {
      if (v === undefined) return undefinedCtx(ctx);
      input = names.length === 1 ? v : setIn(input ?? new RObject(), names.slice(1), v);
    } else {
      const path = names.slice(1);
      const node = nodeAt(ctx.compiled.root, path);
      if (node && (node.funcs.length > 0 || node.defaultFunc)) {
        mocks.set('u:' + path.join('.'), mock ?? { kind: 'value', v: defined(v, ex) });
        continue;
      }
      if (v === undefined) return undefinedCtx(ctx);
      patches.push({ path, value: v });
    }
  }
  return { ...ctx, input, patches, mocks, cache: new Map() };
}

const defined = (v: Value | undefined, ex: Expr): Value => (v === undefined ? undefinedValue(ex) : v);
const undefinedValue = (ex: Expr): never => {
  throw new RegoError('eval_conflict_error', 'with value is undefined', ex.loc);
};
/** `with input as <undefined>` makes the expression undefined: no input at all */
const undefinedCtx = (ctx: Ctx): Ctx => ({ ...ctx, input: undefined, cache: new Map() });

function pathOf(t: Term): string[] | null {
  if (t.t === 'var') return [t.name];
  if (t.t !== 'ref' || t.head.t !== 'var') return null;
  const out = [t.head.name];
  for (const p of t.path) {
    if (p.t !== 'val' || typeof p.v !== 'string') return null;
    out.push(p.v);
  }
  return out;
}
