/**
 * Rows of a `context_nodes` ingest as graph records. A row carrying `_from`
 * or `_to` is a relationship (`_from`, `_to` as node ids `Label:key`, `type`
 * its relationship type, the other properties its own); any other row is a
 * node (`label` its label, `_key` the row's `_key` or else its pipeline's
 * `key_field`, every other property kept with its JSON type). A row that
 * cannot be a graph record is rejected here with the reason; the table keeps
 * it all the same.
 */
import type { GraphRejection } from '../../ingest/graph-ledger.js';
import { parseRows } from '../../ingest/ndjson-lines.js';
import type { GraphNodeInput, GraphRelationshipInput } from '../../runtime/graph/store.js';
import { isValidLabel, isValidProperty, MAX_KEY_LENGTH, parseNodeId } from '../../runtime/graph/names.js';

export interface Lined<T> {
  /** 1-based line of the body */
  readonly line: number;
  readonly record: T;
}

export interface EntityRecords {
  readonly nodes: Lined<GraphNodeInput>[];
  readonly relationships: Lined<GraphRelationshipInput>[];
  readonly rejections: GraphRejection[];
}

/** the row fields that name a relationship (never its properties) */
const RELATIONSHIP_FIELDS = new Set(['_from', '_to', 'type', 'label']);
/** the row fields that name a node (never its properties) */
const NODE_FIELDS = new Set(['label', '_key']);

class Rejected extends Error {}

export function entityRecords(body: Buffer, keyField: string | null): EntityRecords {
  const records: EntityRecords = { nodes: [], relationships: [], rejections: [] };
  for (const { line, value } of parseRows(body)) {
    try {
      if ('_from' in value || '_to' in value) records.relationships.push({ line, record: relationshipOf(value) });
      else records.nodes.push({ line, record: nodeOf(value, keyField) });
    } catch (error) {
      if (!(error instanceof Rejected)) throw error;
      records.rejections.push({ line, reason: error.message });
    }
  }
  return records;
}

function nodeOf(row: Record<string, unknown>, keyField: string | null): GraphNodeInput {
  const label = row['label'];
  if (!isValidLabel(label)) {
    throw new Rejected(
      label === undefined || label === null
        ? 'no "label": a node row needs one'
        : `"label" ${JSON.stringify(label).slice(0, 80)} is not a graph label (letters, digits and "_", starting with a letter, at most 64)`,
    );
  }
  const keyName = row['_key'] !== undefined && row['_key'] !== null ? '_key' : keyField;
  const key = keyOf(keyName === null ? undefined : row[keyName], keyName ?? '_key');
  return { label, properties: { ...propertiesOf(row, NODE_FIELDS), _key: key } };
}

function relationshipOf(row: Record<string, unknown>): GraphRelationshipInput {
  const type = row['type'];
  if (!isValidLabel(type)) {
    throw new Rejected(
      type === undefined || type === null
        ? 'a relationship row (with "_from"/"_to") needs a "type"'
        : `"type" ${JSON.stringify(type).slice(0, 80)} is not a relationship type (letters, digits and "_", starting with a letter, at most 64)`,
    );
  }
  const from = endOf(row['_from'], '_from');
  const to = endOf(row['_to'], '_to');
  return { type, from_label: from.label, from_key: from.key, to_label: to.label, to_key: to.key, properties: propertiesOf(row, RELATIONSHIP_FIELDS) };
}

function keyOf(value: unknown, field: string): string {
  const key = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof key !== 'string' || key.length === 0) throw new Rejected(`no key: "${field}" must be a non-empty string or a number`);
  if (key.length > MAX_KEY_LENGTH) throw new Rejected(`"${field}" is longer than ${MAX_KEY_LENGTH} characters`);
  return key;
}

function endOf(value: unknown, field: string): { label: string; key: string } {
  if (typeof value !== 'string') throw new Rejected(`"${field}" must be a node id "Label:key"`);
  try {
    return parseNodeId(value);
  } catch {
    throw new Rejected(`"${field}" ${JSON.stringify(value).slice(0, 80)} is not a node id "Label:key"`);
  }
}

/** the row's other fields, nulls left out; a name the graph cannot hold rejects the row */
function propertiesOf(row: Record<string, unknown>, skip: ReadonlySet<string>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (skip.has(name) || value === null) continue;
    if (!isValidProperty(name)) {
      throw new Rejected(
        `property "${name.slice(0, 80)}" is not a graph property name (letters, digits and "_", at most 64; _id, _label, _src, _dst reserved)`,
      );
    }
    properties[name] = value;
  }
  return properties;
}
