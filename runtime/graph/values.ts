/**
 * Property values in and out of the embedded engine.
 *
 * Column types are chosen by the first non-null value a property receives:
 * boolean -> BOOLEAN, integer -> INT64, other number -> DOUBLE, string ->
 * STRING, array/object -> STRING holding JSON text. A later value of another
 * type is converted when nothing is lost (an integer into DOUBLE; anything
 * into STRING as its text or JSON) and refused otherwise with 400
 * `validation_error` naming the label, property and both types.
 *
 * Values travel to the engine as text and are CAST in Cypher: the engine
 * infers a parameter list's field types from its first row, so sending JS
 * numbers would read 1.5 after a 1 as an integer's bits.
 */
import { ServiceError } from '../errors.js';

export type ColumnType = 'STRING' | 'INT64' | 'DOUBLE' | 'BOOLEAN';

export function columnTypeOf(value: unknown): ColumnType | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return 'BOOLEAN';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'INT64' : 'DOUBLE';
  return 'STRING';
}

/**
 * A column type as the engine names it (`CALL table_info`) in our vocabulary.
 * Kùzu reports BOOLEAN columns as `BOOL`; any type the service never creates
 * (only the service defines columns) is compared as text.
 */
export function columnTypeFromEngine(engineType: string): ColumnType {
  switch (engineType.toUpperCase()) {
    case 'BOOL':
    case 'BOOLEAN':
      return 'BOOLEAN';
    case 'INT64':
      return 'INT64';
    case 'DOUBLE':
      return 'DOUBLE';
    default:
      return 'STRING';
  }
}

/** whether a column of `type` takes the value without loss (null always fits) */
export function fitsColumn(value: unknown, type: ColumnType): boolean {
  if (value === null || value === undefined || type === 'STRING') return true;
  const given = columnTypeOf(value);
  return given === type || (type === 'DOUBLE' && given === 'INT64');
}

/** the value as the text the engine casts to `type` (null stays null); 400 when it does not fit */
export function toColumnText(value: unknown, type: ColumnType, table: string, property: string): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'STRING') return asText(value);
  if (!fitsColumn(value, type)) {
    const given = columnTypeOf(value);
    throw new ServiceError(
      'validation_error',
      `property ${table}.${property} holds ${type} values; ${JSON.stringify(value).slice(0, 60)} (${given ?? 'null'}) cannot be stored there`,
      { label: table, property, column_type: type, value_type: given },
    );
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return asText(value);
}

/** a scalar as its text, anything else as JSON */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/** an engine value as JSON: safe integers as numbers, bigger ones as strings, dates as ISO text */
export function toJsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if ('_label' in record && '_id' in record && ('_src' in record || '_key' in record || Object.keys(record).length >= 2)) {
      return '_src' in record ? presentRel(record) : presentNode(record);
    }
    return Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, toJsonValue(inner)]));
  }
  return value;
}

/** the properties of an engine node or relationship value, internal fields and nulls left out */
export function propertiesOf(record: Record<string, unknown>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (name === '_id' || name === '_label' || name === '_src' || name === '_dst' || value === null) continue;
    properties[name] = toJsonValue(value);
  }
  return properties;
}

function presentNode(record: Record<string, unknown>): Record<string, unknown> {
  const label = String(record['_label']);
  const key = record['_key'];
  return typeof key === 'string' ? { id: `${label}:${key}`, label, key, properties: propertiesOf(record) } : { label, properties: propertiesOf(record) };
}

function presentRel(record: Record<string, unknown>): Record<string, unknown> {
  return { type: String(record['_label']), properties: propertiesOf(record) };
}
