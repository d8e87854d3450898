/** What a scalar function's translation gets: its node, its arguments as SQL, its result type. */
import type { KNode } from './kusto.js';
import type { ScalarScope } from './scalar.js';

export interface Call {
  readonly node: KNode;
  readonly scope: ScalarScope;
  readonly args: readonly KNode[];
  /** argument i as SQL */
  arg(index: number): string;
  /** argument i as SQL of the given Kusto type (dynamic values converted) */
  as(index: number, type: string): string;
  readonly type: string;
}

export type Translate = (call: Call) => string;
