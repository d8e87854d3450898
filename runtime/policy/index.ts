/**
 * Public API of the Rego engine: parse and validate sources, compile modules into a bundle,
 * run queries (OPA's query API: a list of variable bindings) and evaluate rules by data path.
 */
import type { Body, Module, Term } from './ast.js';
import { compileModules, compileQuery, type Compiled } from './compiler.js';
import { RegoError } from './errors.js';
import type { Ctx, Env } from './eval/context.js';
import { evalBody } from './eval/body.js';
import { evalData } from './eval/docs.js';
import { parseModule, parseQuery, parseTermText, type RegoVersion } from './parser.js';
export type { RegoVersion } from './parser.js';
import { collectVars } from './resolve.js';
import { fromJSON, RObject, toJSON, type Value } from './value.js';
import { evalTerm } from './eval/terms.js';

export { RegoError } from './errors.js';
export { UnsupportedBuiltin } from './builtins/index.js';
export { toJSON, type Value } from './value.js';

export interface SourceError {
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly code: string;
}

export interface ModuleSource {
  /** file name used in error locations */
  readonly name?: string;
  readonly source: string;
  /** Rego syntax version (default 1); in v0, `deny[msg] { … }` is a partial set */
  readonly regoVersion?: RegoVersion;
}

export interface EvalOptions {
  /** JSON input document (absent: `input` is undefined) */
  readonly input?: unknown;
  /** base documents under `data` (default: the bundle's data) */
  readonly data?: unknown;
  /** built-in errors become query errors instead of undefined */
  readonly strictBuiltinErrors?: boolean;
  /** pins `time.now_ns()` for the evaluation */
  readonly nowNs?: bigint;
  /** input given as Rego term text (conformance `input_term`) */
  readonly inputTerm?: string;
  /** evaluation time budget in milliseconds (default 1000): past it, eval_cancel_error */
  readonly timeoutMs?: number;
}

/** a JS stack overflow (absurdly deep nesting) becomes an engine error, never a crash */
function guard<T>(fn: () => T, code: 'eval_cancel_error' | 'rego_parse_error' = 'eval_cancel_error'): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new RegoError(code, `too deeply nested: ${err.message}`);
    throw err;
  }
}

const toSourceError = (err: unknown): SourceError[] => {
  if (err instanceof RegoError) return [{ line: err.location?.line ?? 1, column: err.location?.column ?? 1, message: err.detail, code: err.code }];
  throw err;
};

/** parse + validate one source (syntax, name resolution, rule kinds): [] when valid */
export function validate(source: string, name?: string, regoVersion: RegoVersion = 1): SourceError[] {
  try {
    guard(() => compileModules([parseModule(source, name, regoVersion)]), 'rego_parse_error');
    return [];
  } catch (err) {
    return toSourceError(err);
  }
}

export class CompiledBundle {
  private readonly data: Value;
  private readonly queries = new Map<string, { body: Body; vars: string[] }>();
  private readonly paths = new Map<string, Term[]>();
  constructor(
    private readonly compiled: Compiled,
    data: unknown,
  ) {
    this.data = fromJSON(data ?? {});
  }

  get modules(): readonly Module[] {
    return this.compiled.modules;
  }

  private ctx(opts: EvalOptions): Ctx {
    let input: Value | undefined = opts.input === undefined ? undefined : fromJSON(opts.input);
    if (opts.inputTerm !== undefined) {
      const base = {
        compiled: this.compiled,
        input: undefined,
        data: new RObject(),
        cache: new Map(),
        mocks: new Map(),
        patches: [],
        strict: false,
        nowNs: 0n,
        stack: new Set<string>(),
        budget: { deadline: Infinity, steps: 0 },
      };
      evalTerm(parseTermText(opts.inputTerm), new Map(), base, (v) => ((input = v), true));
    }
    return {
      compiled: this.compiled,
      input,
      data: opts.data === undefined ? this.data : fromJSON(opts.data),
      cache: new Map(),
      mocks: new Map(),
      patches: [],
      strict: opts.strictBuiltinErrors ?? false,
      // wall clock: a caller without a runtime clock (the policy playground) evaluates time.now_ns() now
      nowNs: opts.nowNs ?? BigInt(Date.now()) * 1_000_000n,
      stack: new Set(),
      budget: { deadline: performance.now() + (opts.timeoutMs ?? 1000), steps: 0 },
    };
  }

  private prepare(text: string): { body: Body; vars: string[] } {
    let q = this.queries.get(text);
    if (!q) {
      const body = guard(() => compileQuery(parseQuery(text), this.compiled), 'rego_parse_error');
      const vars: string[] = [];
      for (const ex of body) {
        const e = ex.e;
        if (e.k === 'term') collectVars(e.term, vars);
        if (e.k === 'unify' || e.k === 'assign') [e.a, e.b].forEach((t) => collectVars(t, vars));
        if (e.k === 'somein') [e.key, e.value].forEach((t) => t && collectVars(t, vars));
      }
      q = { body, vars: [...new Set(vars)].filter((v) => !v.startsWith('$') && v !== 'input' && v !== 'data') };
      if (this.queries.size > 500) this.queries.clear();
      this.queries.set(text, q);
    }
    return q;
  }

  /** runs a query; each result binds the query's named vars (throws RegoError) */
  queryValues(text: string, opts: EvalOptions = {}): Map<string, Value>[] {
    const { body, vars } = this.prepare(text);
    const ctx = this.ctx(opts);
    const env: Env = new Map();
    const out: Map<string, Value>[] = [];
    guard(() =>
      evalBody(body, 0, env, ctx, () => {
        const row = new Map<string, Value>();
        for (const v of vars) {
          const x = env.get(v);
          if (x !== undefined) row.set(v, x);
        }
        out.push(row);
        return false;
      }),
    );
    return out;
  }

  /** like queryValues, with JSON bindings (sets as sorted arrays) */
  query(text: string, opts: EvalOptions = {}): Record<string, unknown>[] {
    return this.queryValues(text, opts).map((row) => Object.fromEntries([...row].map(([k, v]) => [k, toJSON(v)])));
  }

  private pathTerms(ref: string | readonly string[]): Term[] {
    const key = typeof ref === 'string' ? ref : ref.join('.');
    let terms = this.paths.get(key);
    if (!terms) {
      const path = typeof ref === 'string' ? ref.split('.').filter((s, i) => !(i === 0 && s === 'data')) : ref;
      terms = path.map((v) => ({ t: 'val', v }));
      if (this.paths.size > 500) this.paths.clear();
      this.paths.set(key, terms);
    }
    return terms;
  }

  private evalIn(ref: string | readonly string[], ctx: Ctx): Value | undefined {
    let out: Value | undefined;
    guard(() => evalData(this.pathTerms(ref), 0, new Map(), ctx, (v) => ((out = v), true)));
    return out;
  }

  /** the value of a document, e.g. `data.service.x.allow` (undefined when not defined) */
  evalValue(ref: string | readonly string[], opts: EvalOptions = {}): Value | undefined {
    return this.evalIn(ref, this.ctx(opts));
  }

  /** several documents for one input (e.g. allow and deny): rules they share are evaluated once */
  evalMany(refs: readonly string[], opts: EvalOptions = {}): (Value | undefined)[] {
    const ctx = this.ctx(opts);
    return refs.map((ref) => this.evalIn(ref, ctx));
  }

  eval(ref: string | readonly string[], opts: EvalOptions = {}): unknown {
    const v = this.evalValue(ref, opts);
    return v === undefined ? undefined : toJSON(v);
  }
}

/** compiles modules (throws RegoError with code rego_parse_error / rego_compile_error / rego_type_error) */
export function compile(modules: readonly (ModuleSource | string)[], options: { data?: unknown; regoVersion?: RegoVersion } = {}): CompiledBundle {
  return guard(() => {
    const version = options.regoVersion ?? 1;
    const parsed = modules.map((m, i) =>
      typeof m === 'string' ? parseModule(m, `module${i}.rego`, version) : parseModule(m.source, m.name, m.regoVersion ?? version),
    );
    return new CompiledBundle(compileModules(parsed), options.data);
  }, 'rego_parse_error');
}
