/** Rego syntax tree. Operators are calls (`a + b` is `plus(a, b)`); locations are 1-based. */
import type { Location } from './errors.js';
import type { Value } from './value.js';

export type Term =
  | { readonly t: 'val'; readonly v: Value; readonly loc?: Location }
  | { readonly t: 'var'; name: string; readonly loc?: Location }
  | { readonly t: 'ref'; head: Term; readonly path: Term[]; readonly loc?: Location }
  | { readonly t: 'array'; readonly items: Term[]; readonly loc?: Location }
  | { readonly t: 'set'; readonly items: Term[]; readonly loc?: Location }
  | { readonly t: 'object'; readonly items: [Term, Term][]; readonly loc?: Location }
  | { readonly t: 'acomp' | 'scomp'; readonly head: Term; readonly body: Body; readonly loc?: Location }
  | { readonly t: 'ocomp'; readonly key: Term; readonly value: Term; readonly body: Body; readonly loc?: Location }
  /** fn is the dotted name as written; the compiler resolves it to `target` */
  | { readonly t: 'call'; fn: string; readonly args: Term[]; target?: CallTarget; readonly loc?: Location };

/** what a call invokes: a built-in by name, or user functions at a data path */
export type CallTarget = { readonly kind: 'builtin'; readonly name: string } | { readonly kind: 'user'; readonly path: string[] };

export interface With {
  readonly target: Term;
  readonly value: Term;
}

export type ExprBody =
  | { readonly k: 'term'; readonly term: Term }
  | { readonly k: 'unify'; readonly a: Term; readonly b: Term }
  | { readonly k: 'assign'; readonly a: Term; readonly b: Term }
  | { readonly k: 'some'; readonly vars: string[] }
  | { readonly k: 'somein'; readonly key: Term | null; readonly value: Term; readonly coll: Term }
  | { readonly k: 'every'; readonly key: Term | null; readonly value: Term; readonly coll: Term; readonly body: Body };

export interface Expr {
  readonly e: ExprBody;
  readonly neg: boolean;
  readonly with: With[];
  readonly loc: Location;
}

export type Body = Expr[];

type RuleKind = 'complete' | 'set' | 'object' | 'func';

export interface Rule {
  kind: RuleKind;
  /** head reference relative to the package: a name, then string keys or (last) a key term */
  readonly ref: Term[];
  /** partial set element or partial object key */
  readonly key: Term | null;
  readonly value: Term;
  readonly args: Term[] | null;
  readonly body: Body;
  readonly elses: { readonly value: Term; readonly body: Body; readonly loc: Location }[];
  readonly isDefault: boolean;
  readonly loc: Location;
  /** filled by the compiler: data path of the rule (package + static head) */
  path?: string[];
}

export interface Import {
  readonly path: Term;
  readonly alias: string;
}

export interface Module {
  readonly pkg: string[];
  readonly imports: Import[];
  readonly rules: Rule[];
  readonly file?: string;
}

export const TRUE: Term = { t: 'val', v: true };
