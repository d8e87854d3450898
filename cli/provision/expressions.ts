/**
 * References inside attribute values. hcl2json hands expressions back as
 * `${...}` templates; the engine evaluates the one form a provisioning
 * folder needs, a reference (`var.name`, `service_task.nightly.webhook_url`,
 * `data.service_permissions.all.names[0]`), alone or inside a string.
 * Anything else (function calls, operators, conditionals) is refused with
 * the expression named, never guessed at.
 */
import { usage } from '../errors.js';
import type { Value } from './schema.js';

/** a value not known until apply (a computed attribute of a resource still to be created) */
export const UNKNOWN: unique symbol = Symbol('known after apply');
export type Resolved = Value | typeof UNKNOWN | readonly Resolved[] | { readonly [key: string]: Resolved };

type Step = { readonly kind: 'name'; readonly name: string } | { readonly kind: 'index'; readonly index: number };
export type Reference = readonly Step[];

type Part = { readonly literal: string } | { readonly reference: Reference; readonly source: string };

const IDENTIFIER_START = /[A-Za-z_]/;
const IDENTIFIER = /[A-Za-z0-9_-]/;

/** `a.b[0].c` as steps; throws on anything that is not a plain traversal */
function parseReference(source: string): Reference {
  const text = source.trim();
  const steps: Step[] = [];
  let at = 0;
  const identifier = (): string => {
    const start = at;
    if (!IDENTIFIER_START.test(text[at] ?? ''))
      throw usage(`unsupported expression "${source}": only references such as var.name or service_realm.x.id are supported`);
    while (at < text.length && IDENTIFIER.test(text[at] as string)) at += 1;
    return text.slice(start, at);
  };
  steps.push({ kind: 'name', name: identifier() });
  while (at < text.length) {
    if (text[at] === '.') {
      at += 1;
      steps.push({ kind: 'name', name: identifier() });
    } else if (text[at] === '[') {
      const close = text.indexOf(']', at);
      const index = close === -1 ? NaN : Number(text.slice(at + 1, close));
      if (!Number.isInteger(index) || index < 0) throw usage(`unsupported expression "${source}": an index must be a whole number`);
      steps.push({ kind: 'index', index });
      at = close + 1;
    } else {
      throw usage(`unsupported expression "${source}": only references such as var.name or service_realm.x.id are supported`);
    }
  }
  return steps;
}

/** a string split into literal text and `${reference}` parts (`$${` is a literal `${`) */
function templateParts(text: string): Part[] {
  const parts: Part[] = [];
  let literal = '';
  let at = 0;
  while (at < text.length) {
    if (text.startsWith('$${', at)) {
      literal += '${';
      at += 3;
    } else if (text.startsWith('${', at)) {
      const close = text.indexOf('}', at + 2);
      if (close === -1) throw usage(`unterminated "\${" in "${text}"`);
      if (literal !== '') parts.push({ literal });
      literal = '';
      const source = text.slice(at + 2, close);
      parts.push({ reference: parseReference(source), source });
      at = close + 1;
    } else {
      literal += text[at];
      at += 1;
    }
  }
  if (literal !== '' || parts.length === 0) parts.push({ literal });
  return parts;
}

/** `service_realm.x` / `data.service_permissions.all` / `var.name`: the address a reference depends on */
function referencedAddress(reference: Reference): string {
  const names = reference.map((step) => (step.kind === 'name' ? step.name : `[${step.index}]`));
  if (names[0] === 'var') return `var.${names[1] ?? ''}`;
  if (names[0] === 'data') return names.slice(0, 3).join('.');
  return names.slice(0, 2).join('.');
}

/** every reference in the value */
export function referencePaths(value: Value): Reference[] {
  if (typeof value === 'string') return templateParts(value).flatMap((part) => ('reference' in part ? [part.reference] : []));
  if (Array.isArray(value)) return value.flatMap((item: Value) => referencePaths(item));
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap((item) => referencePaths(item));
  return [];
}

/** every address the value refers to */
export const referencesIn = (value: Value): string[] => referencePaths(value).map(referencedAddress);

/** looks up the value of one reference (the engine supplies variables and resource state) */
export type Lookup = (reference: Reference, source: string) => Resolved;

/** the value with every reference replaced; a string that is exactly one reference takes that value's type */
export function resolve(value: Value, lookup: Lookup): Resolved {
  if (typeof value === 'string') {
    const parts = templateParts(value);
    const [only] = parts;
    if (parts.length === 1 && only !== undefined) return 'reference' in only ? lookup(only.reference, only.source) : only.literal;
    let text = '';
    for (const part of parts) {
      if ('literal' in part) {
        text += part.literal;
        continue;
      }
      const resolved = lookup(part.reference, part.source);
      if (resolved === UNKNOWN) return UNKNOWN;
      if (resolved !== null && typeof resolved === 'object') throw usage(`"\${${part.source}}" is not a string and cannot be placed inside a string`);
      text += resolved === null ? '' : String(resolved);
    }
    return text;
  }
  if (Array.isArray(value)) return value.map((item: Value) => resolve(item, lookup));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, lookup)]));
  return value;
}

/** true when some part of the value is not known yet */
export function hasUnknown(value: Resolved): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some((item: Resolved) => hasUnknown(item));
  if (value !== null && typeof value === 'object') return Object.values(value).some((item) => hasUnknown(item));
  return false;
}
