/**
 * Source configs at rest and on read. A config is sealed whole (AES-256-GCM,
 * bound to the organization and source id, so a sealed value copied to
 * another record does not open) and is never returned in clear: the fields
 * its connector's configSchema marks `writeOnly: true` (JSON Schema's own
 * "never sent back" keyword), and any field whose name says it holds a
 * secret, are masked.
 */
import type { JsonSchema } from '../../connectors/contract.js';
import { deriveKey, seal, unseal } from '../../runtime/crypto.js';

/** What a masked secret reads as; sent back unchanged in an update, it keeps the stored value. */
const MASKED = '********';

/** Field names that hold secrets even when a plugin forgets `writeOnly`. */
const SECRET_NAME = /(token|secret|password|passwd|api_?key|private_?key|credential|authorization|cookie)/i;

export class ConfigVault {
  private readonly key: Buffer;

  /** @param root SOURCE_CONFIG_KEY, or JWT_SECRET when none is configured */
  constructor(root: Uint8Array) {
    this.key = deriveKey(root, 'source-config');
  }

  seal(orgId: string, sourceId: string, config: Readonly<Record<string, unknown>>): string {
    return seal(this.key, JSON.stringify(config), `source-config:${orgId}:${sourceId}`);
  }

  /** @throws when the value was sealed with another key or for another record */
  unseal(orgId: string, sourceId: string, sealed: string): Record<string, unknown> {
    return JSON.parse(unseal(this.key, sealed, `source-config:${orgId}:${sourceId}`)) as Record<string, unknown>;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const propertiesOf = (schema: JsonSchema | undefined): Record<string, JsonSchema> => {
  const properties = schema?.['properties'];
  return isRecord(properties) ? (properties as Record<string, JsonSchema>) : {};
};

/** Every leaf of a secret field becomes MASKED (an object of header values keeps its keys). */
function maskAll(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskAll);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, maskAll(inner)]));
  return value === null || value === undefined ? value : MASKED;
}

/** The config as it may be shown: secret fields (by schema or by name) masked, recursively. */
export function maskConfig(config: Readonly<Record<string, unknown>>, schema: JsonSchema | undefined): Record<string, unknown> {
  const properties = propertiesOf(schema);
  const masked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const fieldSchema = properties[key];
    if (fieldSchema?.['writeOnly'] === true || SECRET_NAME.test(key)) masked[key] = maskAll(value);
    else if (isRecord(value)) masked[key] = maskConfig(value, fieldSchema);
    else masked[key] = value;
  }
  return masked;
}

/**
 * A config sent in an update, with every value still reading MASKED replaced
 * by the stored value at the same path: clients can send back what they read.
 */
export function restoreMasked(next: unknown, stored: unknown): unknown {
  if (next === MASKED) return stored;
  if (Array.isArray(next)) return next.map((item, index) => restoreMasked(item, Array.isArray(stored) ? stored[index] : undefined));
  if (isRecord(next)) {
    return Object.fromEntries(Object.entries(next).map(([key, value]) => [key, restoreMasked(value, isRecord(stored) ? stored[key] : undefined)]));
  }
  return next;
}

/** Fields that say where calls go: a URL format in the schema, or a name like `base_url`, `url`, `host`, `endpoint`, `server`. */
const ENDPOINT_FORMATS = new Set(['uri', 'url', 'iri', 'uri-reference', 'hostname']);
const ENDPOINT_NAME = /(url|uri|host|endpoint|server)/i;

const isEndpointField = (key: string, schema: JsonSchema | undefined): boolean =>
  (typeof schema?.['format'] === 'string' && ENDPOINT_FORMATS.has(schema['format'])) || ENDPOINT_NAME.test(key);

/**
 * Paths (`base_url`, `auth.server`) of endpoint fields whose value differs
 * between the stored config and the next one (added and removed count).
 */
export function changedEndpoints(next: unknown, stored: unknown, schema: JsonSchema | undefined, prefix = ''): string[] {
  const properties = propertiesOf(schema);
  const nextRecord = isRecord(next) ? next : {};
  const storedRecord = isRecord(stored) ? stored : {};
  const changed: string[] = [];
  for (const key of new Set([...Object.keys(nextRecord), ...Object.keys(storedRecord)])) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const fieldSchema = properties[key];
    if (isEndpointField(key, fieldSchema)) {
      if (JSON.stringify(nextRecord[key]) !== JSON.stringify(storedRecord[key])) changed.push(path);
    } else if (isRecord(nextRecord[key]) || isRecord(storedRecord[key])) {
      changed.push(...changedEndpoints(nextRecord[key], storedRecord[key], fieldSchema, path));
    }
  }
  return changed;
}

/** Paths of the values an update sends back as MASKED (the stored secrets it would keep). */
export function maskedPaths(value: unknown, prefix = ''): string[] {
  if (value === MASKED) return [prefix];
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : isRecord(value) ? Object.entries(value) : [];
  return entries.flatMap(([key, inner]) => maskedPaths(inner, prefix === '' ? key : `${prefix}.${key}`));
}

/** The string values of a config's endpoint fields, by path (`base_url`, `auth.server`). */
export function endpointValues(config: unknown, schema: JsonSchema | undefined, prefix = ''): [string, string][] {
  const properties = propertiesOf(schema);
  if (!isRecord(config)) return [];
  return Object.entries(config).flatMap(([key, value]): [string, string][] => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isEndpointField(key, properties[key])) return typeof value === 'string' ? [[path, value]] : [];
    return endpointValues(value, properties[key], path);
  });
}
