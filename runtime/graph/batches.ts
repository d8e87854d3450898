/**
 * Upsert batches, checked and grouped the way every graph store writes them:
 * nodes by label then key, relationships by (type, from label, to label) then
 * (from key, to key). A record given twice in one batch is one record, its
 * later properties winning.
 *
 * A batch repeats a few names thousands of times, so each distinct label and
 * property name is checked once, and error paths are only spelled out for
 * the record that fails.
 */
import { ServiceError } from '../errors.js';
import type { GraphNodeInput, GraphRelationshipInput } from './store.js';
import { assertKey, assertLabel, assertProperty, isValidKey, isValidLabel, isValidProperty } from './names.js';

export type Properties = Record<string, unknown>;
/** label -> key -> properties (with `_key`) */
export type NodesByLabel = Map<string, Map<string, Properties>>;

export interface Edge {
  readonly f: string;
  readonly t: string;
  readonly props: Properties;
}
export interface EdgeGroup {
  readonly type: string;
  readonly from: string;
  readonly to: string;
  /** by pairKey */
  readonly edges: Map<string, Edge>;
}
/** by `type|from label|to label` */
export type EdgeGroups = Map<string, EdgeGroup>;

/** one relationship's identity within its group */
export function pairKey(edge: { readonly f: string; readonly t: string }): string {
  return `${edge.f}\u0000${edge.t}`;
}

export function groupNodes(nodes: readonly GraphNodeInput[], reserved?: ReadonlySet<string>): { byLabel: NodesByLabel; count: number } {
  const names = new NameChecks(reserved);
  const byLabel: NodesByLabel = new Map();
  let count = 0;
  for (let index = 0; index < nodes.length; index += 1) {
    const node = nodes[index]!;
    names.label(node.label, 'label', () => `nodes[${index}].label`);
    const props = node.properties as Properties | undefined;
    const key = props?.['_key'];
    if (!isValidKey(key)) assertKey(key, `nodes[${index}].properties._key`);
    for (const name in props) names.property(name, () => `nodes[${index}].properties.${name}`);
    let keyed = byLabel.get(node.label);
    if (!keyed) byLabel.set(node.label, (keyed = new Map<string, Properties>()));
    const previous = keyed.get(key);
    if (previous) keyed.set(key, { ...previous, ...props });
    else {
      keyed.set(key, props!);
      count += 1;
    }
  }
  return { byLabel, count };
}

export function groupRelationships(relationships: readonly GraphRelationshipInput[], reserved?: ReadonlySet<string>): { groups: EdgeGroups; count: number } {
  const names = new NameChecks(reserved);
  const groups: EdgeGroups = new Map();
  let count = 0;
  for (let index = 0; index < relationships.length; index += 1) {
    const rel = relationships[index]!;
    names.label(rel.type, 'relationship type', () => `relationships[${index}].type`);
    names.label(rel.from_label, 'label', () => `relationships[${index}].from_label`);
    names.label(rel.to_label, 'label', () => `relationships[${index}].to_label`);
    if (!isValidKey(rel.from_key)) assertKey(rel.from_key, `relationships[${index}].from_key`);
    if (!isValidKey(rel.to_key)) assertKey(rel.to_key, `relationships[${index}].to_key`);
    const props: Properties = rel.properties ?? {};
    for (const name in props) names.property(name, () => `relationships[${index}].properties.${name}`);
    const groupKey = `${rel.type}|${rel.from_label}|${rel.to_label}`;
    let group = groups.get(groupKey);
    if (!group) groups.set(groupKey, (group = { type: rel.type, from: rel.from_label, to: rel.to_label, edges: new Map<string, Edge>() }));
    const edge = { f: rel.from_key, t: rel.to_key, props };
    count += addEdge(group.edges, edge) ? 1 : 0;
  }
  return { groups, count };
}

/** adds or merges into an existing edge; true when the edge is new */
function addEdge(edges: Map<string, Edge>, edge: Edge): boolean {
  const pair = pairKey(edge);
  const previous = edges.get(pair);
  edges.set(pair, previous ? { f: edge.f, t: edge.t, props: { ...previous.props, ...edge.props } } : edge);
  return previous === undefined;
}

/** each distinct name checked once per batch */
class NameChecks {
  private readonly labels = new Set<string>();
  private readonly properties = new Set<string>();

  constructor(private readonly reserved: ReadonlySet<string> | undefined) {}

  label(name: string, what: 'label' | 'relationship type', field: () => string): void {
    if (this.labels.has(name)) return;
    if (!isValidLabel(name)) assertLabel(name, what, field());
    this.labels.add(name);
  }

  property(name: string, field: () => string): void {
    if (this.properties.has(name)) return;
    if (!isValidProperty(name)) assertProperty(name, field());
    if (this.reserved?.has(name)) {
      throw new ServiceError('validation_error', `property name ${name} is reserved`, { issues: [{ path: field(), message: 'reserved' }] });
    }
    this.properties.add(name);
  }
}

/** one caller's upsert batch, prepared; `count`: its distinct records (what the caller is answered) */
export type WriteBatch =
  | { readonly kind: 'nodes'; readonly byLabel: NodesByLabel; readonly count: number }
  | { readonly kind: 'relationships'; readonly groups: EdgeGroups; readonly count: number };
