/**
 * Terraform's values on the wire: cty types in their JSON form and the
 * `DynamicValue` encodings (msgpack, and JSON on input). Values become the
 * engine's `Resolved` values: null, an unknown (`UNKNOWN`), strings, numbers,
 * bools, arrays (list, set, tuple) and plain objects (map, object).
 *
 * msgpack, as cty writes it: null is nil; an unknown value is the extension
 * type 0 (a refined unknown, extension type 12, is read as unknown too); a
 * number is an integer, a float or (when too large) its decimal text; a value
 * of the `dynamic` type is the array `[type JSON as bytes, value]`, unless it
 * is null or wholly unknown. An object always carries all its attributes.
 */
import { decode, encode, ExtData } from '@msgpack/msgpack';
import { UNKNOWN, type Resolved } from '../provision/expressions.js';

export type CtyType =
  | 'string'
  | 'number'
  | 'bool'
  | 'dynamic'
  | readonly ['list' | 'set' | 'map', CtyType]
  | readonly ['object', { readonly [name: string]: CtyType }]
  | readonly ['tuple', readonly CtyType[]];

/** thrown for a value that does not fit its type: becomes an error diagnostic */
class CtyError extends Error {}

const UNKNOWN_EXT = 0;
const REFINED_UNKNOWN_EXT = 12;

/**
 * The types `dynamic` values came with, by decoded object: a value passed
 * through (configuration to plan) keeps its exact type (a `map(string)`
 * stays a map, not an object), others get the type inferred from the value.
 */
const dynamicTypes = new WeakMap<object, CtyType>();

/** the type of a value written as a literal: objects, tuples, strings, numbers, bools */
function inferType(value: Resolved): CtyType {
  if (value === null || value === UNKNOWN) return 'dynamic';
  if (typeof value === 'object') {
    const known = dynamicTypes.get(value);
    if (known !== undefined) return known;
    if (Array.isArray(value)) return ['tuple', (value as readonly Resolved[]).map(inferType)];
    return ['object', Object.fromEntries(Object.entries(value as Record<string, Resolved>).map(([name, item]) => [name, inferType(item)]))];
  }
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  return 'bool';
}

const describe = (type: CtyType): string => JSON.stringify(type);

function parseType(json: unknown): CtyType {
  if (json === 'string' || json === 'number' || json === 'bool' || json === 'dynamic') return json;
  if (Array.isArray(json) && json.length === 2) {
    const [kind, inner] = json as [unknown, unknown];
    if (kind === 'list' || kind === 'set' || kind === 'map') return [kind, parseType(inner)];
    if (kind === 'object' && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      return ['object', Object.fromEntries(Object.entries(inner).map(([name, item]) => [name, parseType(item)]))];
    }
    if (kind === 'tuple' && Array.isArray(inner)) return ['tuple', inner.map(parseType)];
  }
  throw new CtyError(`unsupported type ${JSON.stringify(json)}`);
}

// ---- msgpack -------------------------------------------------------------

type Raw = unknown;

const isUnknownExt = (raw: Raw): boolean => raw instanceof ExtData && (raw.type === UNKNOWN_EXT || raw.type === REFINED_UNKNOWN_EXT);

function fromMsgpack(raw: Raw, type: CtyType, path: string): Resolved {
  if (raw === null || raw === undefined) return null;
  if (isUnknownExt(raw)) return UNKNOWN;
  if (raw instanceof ExtData) throw new CtyError(`${path}: unsupported msgpack extension type ${raw.type}`);
  const fail = (): never => {
    throw new CtyError(`${path}: expected ${describe(type)}, got ${typeof raw}`);
  };
  if (type === 'dynamic') {
    if (!Array.isArray(raw) || raw.length !== 2) return fail();
    const [typeBytes, inner] = raw as [Raw, Raw];
    const text = typeof typeBytes === 'string' ? typeBytes : typeBytes instanceof Uint8Array ? new TextDecoder().decode(typeBytes) : fail();
    const actual = parseType(JSON.parse(text));
    const value = fromMsgpack(inner, actual, path);
    if (value !== null && typeof value === 'object') dynamicTypes.set(value, actual);
    return value;
  }
  if (type === 'string') return typeof raw === 'string' ? raw : fail();
  if (type === 'bool') return typeof raw === 'boolean' ? raw : fail();
  if (type === 'number') {
    if (typeof raw === 'number') return raw;
    if (typeof raw === 'bigint') return Number(raw);
    if (typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
    return fail();
  }
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set') {
    return Array.isArray(raw) ? raw.map((item: Raw, index) => fromMsgpack(item, inner, `${path}[${index}]`)) : fail();
  }
  if (kind === 'tuple') {
    if (!Array.isArray(raw) || raw.length !== inner.length) return fail();
    return raw.map((item: Raw, index) => fromMsgpack(item, inner[index] as CtyType, `${path}[${index}]`));
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || raw instanceof Uint8Array) return fail();
  const entries = raw instanceof Map ? [...(raw as Map<unknown, Raw>).entries()] : Object.entries(raw as Record<string, Raw>);
  const out: Record<string, Resolved> = {};
  if (kind === 'map') {
    for (const [key, item] of entries) out[String(key)] = fromMsgpack(item, inner, `${path}[${JSON.stringify(key)}]`);
    return out;
  }
  const given = new Map(entries.map(([key, item]) => [String(key), item]));
  for (const [name, attributeType] of Object.entries(inner as Readonly<Record<string, CtyType>>))
    out[name] = fromMsgpack(given.get(name) ?? null, attributeType, `${path}.${name}`);
  return out;
}

const unknownExt = (): ExtData => new ExtData(UNKNOWN_EXT, new Uint8Array([0]));

function toMsgpack(value: Resolved | undefined, type: CtyType, path: string): Raw {
  if (value === null || value === undefined) return null;
  if (value === UNKNOWN) return unknownExt();
  const fail = (): never => {
    throw new CtyError(`${path}: ${JSON.stringify(value)} is not a ${describe(type)}`);
  };
  if (type === 'dynamic') {
    const actual = inferType(value);
    return [new TextEncoder().encode(JSON.stringify(actual)), toMsgpack(value, actual, path)];
  }
  if (type === 'string') return typeof value === 'string' ? value : fail();
  if (type === 'bool') return typeof value === 'boolean' ? value : fail();
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value) ? value : fail();
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set' || kind === 'tuple') {
    if (!Array.isArray(value)) return fail();
    const items = value as readonly Resolved[];
    if (kind === 'tuple' && items.length !== inner.length) return fail();
    return items.map((item, index) => toMsgpack(item, kind === 'tuple' ? (inner[index] as CtyType) : inner, `${path}[${index}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) return fail();
  const record = value as Record<string, Resolved>;
  const out: Record<string, Raw> = {};
  if (kind === 'map') {
    for (const [key, item] of Object.entries(record)) out[key] = toMsgpack(item, inner, `${path}[${JSON.stringify(key)}]`);
    return out;
  }
  for (const [name, attributeType] of Object.entries(inner as Readonly<Record<string, CtyType>>))
    out[name] = toMsgpack(record[name], attributeType, `${path}.${name}`);
  return out;
}

// ---- JSON (input only, and the state JSON of UpgradeResourceState) ------

/** cty's JSON form: as msgpack, but a `dynamic` value is `{"value": ..., "type": ...}` and nothing is unknown */
export function fromJson(json: unknown, type: CtyType, path = ''): Resolved {
  if (json === null || json === undefined) return null;
  const fail = (): never => {
    throw new CtyError(`${path || 'value'}: expected ${describe(type)}, got ${JSON.stringify(json)}`);
  };
  if (type === 'dynamic') {
    if (typeof json !== 'object' || Array.isArray(json) || !('type' in json) || !('value' in json)) return fail();
    const actual = parseType((json as { type: unknown }).type);
    const value = fromJson((json as { value: unknown }).value, actual, path);
    if (value !== null && typeof value === 'object') dynamicTypes.set(value, actual);
    return value;
  }
  if (type === 'string') return typeof json === 'string' ? json : fail();
  if (type === 'bool') return typeof json === 'boolean' ? json : fail();
  if (type === 'number') return typeof json === 'number' ? json : typeof json === 'string' && Number.isFinite(Number(json)) ? Number(json) : fail();
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set' || kind === 'tuple') {
    if (!Array.isArray(json)) return fail();
    return json.map((item: unknown, index) => fromJson(item, kind === 'tuple' ? (inner[index] as CtyType) : inner, `${path}[${index}]`));
  }
  if (typeof json !== 'object' || Array.isArray(json)) return fail();
  const record = json as Record<string, unknown>;
  const out: Record<string, Resolved> = {};
  if (kind === 'map') {
    for (const [key, item] of Object.entries(record)) out[key] = fromJson(item, inner, `${path}[${JSON.stringify(key)}]`);
    return out;
  }
  for (const [name, attributeType] of Object.entries(inner as Readonly<Record<string, CtyType>>))
    out[name] = fromJson(record[name], attributeType, path ? `${path}.${name}` : name);
  return out;
}

// ---- DynamicValue --------------------------------------------------------

export interface DynamicValue {
  msgpack?: Uint8Array | Buffer;
  json?: Uint8Array | Buffer;
}

/** a `DynamicValue` of `type` (msgpack, else JSON); an absent or empty one is null */
export function decodeDynamic(dynamic: DynamicValue | null | undefined, type: CtyType): Resolved {
  if (dynamic?.msgpack && dynamic.msgpack.length > 0) {
    let raw: Raw;
    try {
      raw = decode(dynamic.msgpack);
    } catch (error) {
      throw new CtyError(`invalid msgpack: ${(error as Error).message}`);
    }
    return fromMsgpack(raw, type, '');
  }
  if (dynamic?.json && dynamic.json.length > 0) {
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(dynamic.json).toString('utf8'));
    } catch (error) {
      throw new CtyError(`invalid JSON: ${(error as Error).message}`);
    }
    return fromJson(json, type);
  }
  return null;
}

/** `value` as a msgpack `DynamicValue` of `type` */
export function encodeDynamic(value: Resolved, type: CtyType): { msgpack: Buffer } {
  return { msgpack: Buffer.from(encode(toMsgpack(value, type, ''))) };
}

/** the type's JSON bytes, as schemas carry them */
export const typeBytes = (type: CtyType): Buffer => Buffer.from(JSON.stringify(type));
