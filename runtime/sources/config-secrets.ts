/**
 * Source configs at rest and on read. A config is sealed whole (AES-256-GCM,
 * bound to the organization and source id, so a sealed value copied to
 * another record does not open) and is never returned in clear: the fields
 * its connector's configSchema marks `writeOnly: true` (JSON Schema's own
 * "never sent back" keyword), and any field whose name says it holds a
 * secret, are masked.
 */
import type { JsonSchema } from '../../connectors/contract.js';
import { deriveKey, seal, unseal } from '../crypto.js';

/** What a masked secret reads as; sent back unchanged in an update, it keeps the stored value. */
export const MASKED = '********';

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
