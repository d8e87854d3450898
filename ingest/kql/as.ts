/** as: names the rows piped into it, so later parts of the query read them by that name (`| as T | join (T) on k`). */
import { child, type KNode } from './kusto.js';
import type { Relation } from './relation.js';
import type { Translator } from './translate.js';

export function asOperator(translator: Translator, node: KNode, input: Relation): Relation {
  const name = child(child(node, 'Name') as KNode, 'SimpleName') as unknown as string;
  // the CTE is already in the chain: the name is one more way to read it (hints such as hint.materialized change nothing here)
  translator.tableLets.set(name, input);
  return input;
}
