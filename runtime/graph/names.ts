/**
 * Names that end up in Cypher text (labels, relationship types, property
 * names) and node ids. Identifiers are checked against one strict pattern
 * and then always written back-quoted: unchecked text is never interpolated.
 */
import { ServiceError } from '../errors.js';

/** letters, digits and `_`, not starting with a digit or `_` (the engine's internal tables start with `_`) */
const LABEL = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** property names may start with `_` (`_key`), but not the engine's own result fields */
const PROPERTY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const RESERVED_PROPERTIES = new Set(['_id', '_label', '_src', '_dst', '_nodes', '_rels']);

/** the realm every organization starts with and cannot delete (graph, sources and memory default to it) */
export const DEFAULT_REALM = 'default';

export const KEY_PROPERTY = '_key';
export const MAX_KEY_LENGTH = 512;

export const isValidLabel = (name: unknown): name is string => typeof name === 'string' && LABEL.test(name);
export const isValidProperty = (name: string): boolean => PROPERTY.test(name) && !RESERVED_PROPERTIES.has(name);
export const isValidKey = (key: unknown): key is string => typeof key === 'string' && key.length > 0 && key.length <= MAX_KEY_LENGTH;

export function assertLabel(name: string, what: 'label' | 'relationship type', field: string): void {
  if (!isValidLabel(name)) {
    throw new ServiceError(
      'validation_error',
      `invalid ${what} "${String(name).slice(0, 80)}": use letters, digits and "_", starting with a letter (at most 64)`,
      {
        issues: [{ path: field, message: `not a valid ${what}` }],
      },
    );
  }
}

export function assertProperty(name: string, field: string): void {
  if (!isValidProperty(name)) {
    throw new ServiceError(
      'validation_error',
      `invalid property name "${name.slice(0, 80)}": use letters, digits and "_" (at most 64; ${[...RESERVED_PROPERTIES].join(', ')} are reserved)`,
      {
        issues: [{ path: field, message: 'not a valid property name' }],
      },
    );
  }
}

export function assertKey(key: unknown, field: string): asserts key is string {
  if (!isValidKey(key)) {
    throw new ServiceError('validation_error', `${field} must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`, {
      issues: [{ path: field, message: '_key is required' }],
    });
  }
}

/** back-quoted identifier; the name was checked by one of the asserts above */
export const quote = (name: string): string => `\`${name}\``;

export const nodeId = (label: string, key: string): string => `${label}:${key}`;

/** `Label:key` (the key may itself hold `:`); 400 `invalid_node_id` otherwise */
export function parseNodeId(id: string): { label: string; key: string } {
  const colon = id.indexOf(':');
  const label = colon > 0 ? id.slice(0, colon) : '';
  const key = colon > 0 ? id.slice(colon + 1) : '';
  if (!LABEL.test(label) || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new ServiceError('invalid_node_id', `invalid node id "${id.slice(0, 100)}": expected Label:key (URL-encoded), e.g. Service:payments-api`, {
      id: id.slice(0, 200),
      expected: 'Label:key',
    });
  }
  return { label, key };
}
