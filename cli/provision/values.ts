/** Comparing, type-checking and showing attribute values. */
import { usage } from '../errors.js';
import { UNKNOWN, type Resolved } from './expressions.js';
import type { Attribute, Value } from './schema.js';

/** JSON with sorted keys: equal values give equal text */
export function canonical(value: Resolved | undefined): string {
  if (value === UNKNOWN) return '(known after apply)';
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((item: Resolved) => canonical(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const sameValue = (a: Resolved | undefined, b: Resolved | undefined): boolean => canonical(a) === canonical(b);

/** how a value is shown in a plan: sensitive ones never */
export const shown = (attribute: Attribute | undefined, value: Resolved | undefined): string => (attribute?.sensitive ? '(sensitive)' : canonical(value));

/** throws when a known value does not fit the attribute's type */
export function checkType(address: string, name: string, attribute: Attribute, value: Resolved): void {
  if (value === null || value === UNKNOWN) return;
  const fail = (expected: string): never => {
    throw usage(`${address}: ${name} must be ${expected}, got ${canonical(value)}`);
  };
  switch (attribute.type) {
    case 'string':
      if (typeof value !== 'string') fail('a string');
      return;
    case 'number':
      if (typeof value !== 'number') fail('a number');
      return;
    case 'bool':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'list_string':
      if (!Array.isArray(value) || value.some((item: Resolved) => typeof item !== 'string' && item !== UNKNOWN)) fail('a list of strings');
      return;
    case 'map_string':
      if (
        value === null ||
        typeof value !== 'object' ||
        Array.isArray(value) ||
        Object.values(value).some((item) => typeof item !== 'string' && item !== UNKNOWN)
      ) {
        fail('a map of strings');
      }
      return;
    case 'json':
      if (typeof value !== 'object' || Array.isArray(value)) fail('an object');
      return;
  }
}

/** a `--var name=value` / TF_VAR_name text as a value: what it parses to as JSON when that is a number, bool, list or object, else the text */
export function variableValue(text: string): Value {
  try {
    const parsed = JSON.parse(text) as Value;
    return typeof parsed === 'string' || parsed === null ? text : parsed;
  } catch {
    return text;
  }
}
