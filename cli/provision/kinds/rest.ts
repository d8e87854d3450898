/** Shared REST helpers of the kinds: reading an object that may be gone, and copying fields between shapes. */
import { CliError } from '../../errors.js';
import type { Api, Attributes, Value } from '../schema.js';

/** GET `path`; null when the server answers 404 (deleted outside the engine) */
export async function readOrNull<T>(api: Api, path: string): Promise<T | null> {
  try {
    return await api.json<T>('GET', path);
  } catch (error) {
    if (error instanceof CliError && error.reason === 'not_found') return null;
    throw error;
  }
}

/** DELETE `path`; an object already gone counts as deleted */
export async function deleteIfPresent(api: Api, path: string): Promise<void> {
  try {
    await api.json('DELETE', path);
  } catch (error) {
    if (!(error instanceof CliError && error.reason === 'not_found')) throw error;
  }
}

/** the named fields of `source`, absent ones as null */
export function pick(source: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const name of names) out[name] = (source[name] ?? null) as Value;
  return out;
}

/** `desired` without the attributes that are null (left to the server's defaults) */
export function withoutNulls(desired: Attributes): Record<string, Value> {
  return Object.fromEntries(Object.entries(desired).filter(([, value]) => value !== null));
}

/** What the API shows instead of a secret (source configs, policy-source ssh keys). */
const MASK = '********';

/**
 * `live` with every masked leaf replaced by the value at the same place in
 * `prior` (the applied one): a mask alone is no drift, a changed plain field
 * still is. Where `prior` has nothing there, the mask stays.
 */
export function unmask(live: Value, prior: Value | undefined): Value {
  if (live === MASK) return prior === undefined ? live : prior;
  if (Array.isArray(live)) {
    const priorItems = (Array.isArray(prior) ? prior : []) as readonly Value[];
    return (live as readonly Value[]).map((item, index) => unmask(item, priorItems[index]));
  }
  if (live !== null && typeof live === 'object') {
    const priorFields = (prior !== null && typeof prior === 'object' && !Array.isArray(prior) ? prior : {}) as Readonly<Record<string, Value>>;
    return Object.fromEntries(Object.entries(live).map(([key, inner]) => [key, unmask(inner, priorFields[key])]));
  }
  return live;
}

/** `/path/id` with the id escaped */
export const itemPath = (collection: string, id: string): string => `${collection}/${encodeURIComponent(id)}`;
