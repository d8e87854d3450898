/**
 * Bounds on the `params` of a user Cypher query, checked before any other
 * work: the engine converts parameters value by value, and a deeply nested
 * or huge object used to hold the event loop for minutes.
 */
const MAX_PARAM_DEPTH = 16;
/** every value counts: scalars, list items, map entries */
const MAX_PARAM_VALUES = 100_000;
const MAX_PARAM_KEYS = 1_000;

/** why `params` is refused, or null when it is within bounds (walked without recursion) */
export function paramsProblem(params: Record<string, unknown>): string | null {
  if (Object.keys(params).length > MAX_PARAM_KEYS) return `params holds at most ${MAX_PARAM_KEYS} parameters`;
  const pending: [unknown, number][] = Object.values(params).map((value) => [value, 1]);
  let values = 0;
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    values += 1;
    if (values > MAX_PARAM_VALUES) return `params holds at most ${MAX_PARAM_VALUES} values in all`;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_PARAM_DEPTH) return `params nest at most ${MAX_PARAM_DEPTH} levels deep`;
    const children = Array.isArray(value) ? value : Object.values(value);
    if (values + children.length > MAX_PARAM_VALUES) return `params holds at most ${MAX_PARAM_VALUES} values in all`;
    for (const child of children) pending.push([child, depth + 1]);
  }
  return null;
}
