/** Evaluation context: documents, per-query caches and `with` overrides. */
import type { CallTarget } from '../ast.js';
import type { Compiled } from '../compiler.js';
import type { Value } from '../value.js';

export type Mock = { readonly kind: 'value'; readonly v: Value } | { readonly kind: 'fn'; readonly target: CallTarget };

export interface Patch {
  readonly path: readonly string[];
  readonly value: Value;
}

export interface Ctx {
  readonly compiled: Compiled;
  readonly input: Value | undefined;
  readonly data: Value;
  /** rule values by data path; a fresh map under every `with` */
  readonly cache: Map<string, Value | undefined>;
  /** key: `b:<builtin>` or `u:<data path>` */
  readonly mocks: ReadonlyMap<string, Mock>;
  readonly patches: readonly Patch[];
  readonly strict: boolean;
  readonly nowNs: bigint;
  /** rule paths being evaluated (recursion guard) */
  readonly stack: Set<string>;
  /** time budget: performance.now() deadline, checked every 1024 expressions */
  readonly budget: { deadline: number; steps: number };
}

export type Env = Map<string, Value>;
/** continuation: return true to stop the search */
export type K = () => boolean;
export type KV = (v: Value) => boolean;
