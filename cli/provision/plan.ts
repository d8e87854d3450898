/**
 * Plan: refresh the state against the live API, evaluate the configuration
 * in dependency order, and say per resource what apply would do: create,
 * update in place (which attributes), replace (which immutable attribute
 * forces it), delete, or nothing. Changes made outside the engine are shown
 * as drift.
 */
import { usage } from '../errors.js';
import type { Configuration, ResourceBlock } from './config.js';
import { hasUnknown, referencesIn, resolve, UNKNOWN, type Reference, type Resolved } from './expressions.js';
import { DATA_SOURCES, RESOURCE_KINDS } from './kinds/index.js';
import type { Api, Attributes, ResourceKind, Value } from './schema.js';
import { settable } from './schema.js';
import type { ResourceState, StateDocument } from './state.js';
import { checkType, sameValue, variableValue } from './values.js';

type Action = 'create' | 'update' | 'replace' | 'delete' | 'noop';

interface AttributeChange {
  readonly name: string;
  readonly before: Resolved | undefined;
  readonly after: Resolved | undefined;
}

export interface PlannedChange {
  readonly address: string;
  readonly kind: ResourceKind;
  readonly action: Action;
  /** the changed attributes (create: every set one) */
  readonly changes: readonly AttributeChange[];
  /** immutable attributes whose change forces the replacement (empty: asked for with `--replace`) */
  readonly forcedBy: readonly string[];
  /** the configuration block (null for a delete) */
  readonly block: ResourceBlock | null;
  /** the state before (null for a create) */
  readonly prior: ResourceState | null;
}

export interface Drift {
  readonly address: string;
  /** null: deleted outside the engine */
  readonly changes: readonly AttributeChange[] | null;
}

export interface Plan {
  readonly changes: readonly PlannedChange[];
  readonly drift: readonly Drift[];
  /** the refreshed state resources (gone ones removed) */
  readonly refreshed: Record<string, ResourceState>;
  /** data source values by address */
  readonly data: ReadonlyMap<string, Attributes>;
}

export interface EvaluationInput {
  readonly config: Configuration;
  /** `--var` and TF_VAR_ values, as text */
  readonly variables: ReadonlyMap<string, string>;
  /** `--replace` addresses: replaced even though no immutable attribute changed (Terraform's `-replace`) */
  readonly replace?: ReadonlySet<string>;
}

/** the variables' values: given, else the default; a variable with neither is an error */
export function variableValues({ config, variables }: EvaluationInput): Map<string, Value> {
  const values = new Map<string, Value>();
  for (const [name, block] of config.variables) {
    const given = variables.get(name);
    if (given !== undefined) values.set(name, variableValue(given));
    else if (block.default !== undefined) values.set(name, block.default);
    else throw usage(`variable "${name}" has no value: pass --var ${name}=... or set TF_VAR_${name}`);
  }
  for (const name of variables.keys()) if (!config.variables.has(name)) throw usage(`--var ${name}: no variable "${name}" is declared`);
  return values;
}

/** resources in an order where each comes after what it refers to; a cycle is an error */
function dependencyOrder(blocks: readonly ResourceBlock[]): ResourceBlock[] {
  const byAddress = new Map(blocks.map((block) => [block.address, block]));
  const order: ResourceBlock[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (block: ResourceBlock, path: string[]): void => {
    const mark = state.get(block.address);
    if (mark === 'done') return;
    if (mark === 'visiting') throw usage(`dependency cycle: ${[...path, block.address].join(' -> ')}`);
    state.set(block.address, 'visiting');
    for (const address of dependenciesOf(block)) {
      const target = byAddress.get(address);
      if (target) visit(target, [...path, block.address]);
    }
    state.set(block.address, 'done');
    order.push(block);
  };
  for (const block of blocks) visit(block, []);
  return order;
}

export const dependenciesOf = (block: ResourceBlock): string[] => [
  ...new Set([...referencesIn(block.body as Value), ...block.dependsOn].filter((address) => !address.startsWith('var.'))),
];

/** follows the steps after an address into a value */
function walk(value: Resolved | undefined, steps: Reference, source: string): Resolved {
  let current: Resolved | undefined = value;
  for (const step of steps) {
    if (current === UNKNOWN) return UNKNOWN;
    if (step.kind === 'index') current = Array.isArray(current) ? (current[step.index] as Resolved | undefined) : undefined;
    else current = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, Resolved>)[step.name] : undefined;
    if (current === undefined) throw usage(`"\${${source}}" does not name a value`);
  }
  return current ?? null;
}

/** what references resolve against: variables, data sources, and resources as planned so far */
export class Scope {
  constructor(
    private readonly variables: ReadonlyMap<string, Value>,
    private readonly data: ReadonlyMap<string, Attributes>,
    readonly resources: Map<string, Record<string, Resolved>>,
    private readonly declared: ReadonlySet<string>,
  ) {}

  lookup = (reference: Reference, source: string): Resolved => {
    const names = reference.map((step) => (step.kind === 'name' ? step.name : ''));
    if (names[0] === 'var') {
      const value = this.variables.get(names[1] ?? '');
      if (value === undefined) throw usage(`"\${${source}}": no variable "${names[1] ?? ''}" is declared`);
      return walk(value, reference.slice(2), source);
    }
    const depth = names[0] === 'data' ? 3 : 2;
    const address = names.slice(0, depth).join('.');
    const values = names[0] === 'data' ? this.data.get(address) : this.resources.get(address);
    if (values === undefined) {
      throw usage(this.declared.has(address) ? `"\${${source}}" is not known yet` : `"\${${source}}": ${address} is not declared`);
    }
    return walk(values, reference.slice(depth), source);
  };
}

/** the block's settable attributes, references resolved, defaults applied, checked against the schema */
export function desiredAttributes(block: ResourceBlock, kind: ResourceKind, scope: Scope): Record<string, Resolved> {
  for (const name of Object.keys(block.body)) {
    if (name === 'id') throw usage(`${block.address}: "id" is computed by the server and cannot be set`);
    const attribute = kind.attributes[name];
    if (!attribute) throw usage(`${block.address}: ${kind.name} has no attribute "${name}"`);
    if (attribute.required !== true && attribute.optional !== true) throw usage(`${block.address}: "${name}" is computed by the server and cannot be set`);
  }
  const desired: Record<string, Resolved> = {};
  for (const [name, attribute] of settable(kind.attributes)) {
    const raw = block.body[name];
    if (raw === undefined) {
      if (attribute.required) throw usage(`${block.address}: the attribute "${name}" is required`);
      desired[name] = attribute.default ?? null;
      continue;
    }
    const value = resolve(raw, scope.lookup);
    checkType(block.address, name, attribute, value);
    desired[name] = value;
  }
  return desired;
}

/** the attributes that differ; an optional+computed one configuration leaves out never differs */
function attributeChanges(block: ResourceBlock, kind: ResourceKind, desired: Record<string, Resolved>, prior: Attributes): AttributeChange[] {
  const changes: AttributeChange[] = [];
  for (const [name, attribute] of settable(kind.attributes)) {
    if (block.body[name] === undefined && attribute.computed) continue;
    if (!sameValue(desired[name], prior[name])) changes.push({ name, before: prior[name], after: desired[name] });
  }
  return changes;
}

/**
 * The refreshed state: each resource read back; sensitive values the API does
 * not return are kept from the state. As in Terraform, purely computed
 * attributes (a gateway's `last_health_status`, a source's `status`) are taken
 * into the state silently: only attributes configuration can set are drift.
 */
export async function refresh(api: Api, state: StateDocument): Promise<{ refreshed: Record<string, ResourceState>; drift: Drift[] }> {
  const refreshed: Record<string, ResourceState> = {};
  const drift: Drift[] = [];
  for (const [address, entry] of Object.entries(state.resources)) {
    const kind = RESOURCE_KINDS.get(entry.kind);
    if (!kind) throw usage(`state holds ${address} of unknown kind ${entry.kind}`);
    const live = await kind.read(api, entry.id, entry.attributes);
    if (live === null) {
      drift.push({ address, changes: null });
      continue;
    }
    const attributes: Record<string, Value> = { ...live };
    for (const [name, attribute] of Object.entries(kind.attributes)) {
      if (attribute.sensitive && (live[name] === null || live[name] === undefined)) attributes[name] = entry.attributes[name] ?? null;
    }
    const changes = settable(kind.attributes)
      .map(([name]) => name)
      .filter((name) => !sameValue(attributes[name], entry.attributes[name]))
      .map((name) => ({ name, before: entry.attributes[name], after: attributes[name] }));
    if (changes.length > 0) drift.push({ address, changes });
    refreshed[address] = { ...entry, attributes };
  }
  return { refreshed, drift };
}

/** an optional+computed attribute configuration leaves to the server (a task's `timezone`) is no drift: the server's value is taken */
function driftAgainst(item: Drift, block: ResourceBlock | undefined): Drift[] {
  if (item.changes === null || block === undefined) return [item];
  const kind = RESOURCE_KINDS.get(block.kind);
  const changes = item.changes.filter((change) => !(kind?.attributes[change.name]?.computed === true && block.body[change.name] === undefined));
  return changes.length > 0 ? [{ address: item.address, changes }] : [];
}

async function readData(api: Api, config: Configuration): Promise<Map<string, Attributes>> {
  const data = new Map<string, Attributes>();
  for (const block of config.data) {
    const source = DATA_SOURCES.get(block.kind);
    if (!source) throw usage(`${block.address}: unknown data source ${block.kind} (known: ${[...DATA_SOURCES.keys()].join(', ')})`);
    data.set(block.address, await source.read(api));
  }
  return data;
}

export function kindOf(block: ResourceBlock): ResourceKind {
  const kind = RESOURCE_KINDS.get(block.kind);
  if (!kind) throw usage(`${block.address}: unknown resource kind ${block.kind} (known: ${[...RESOURCE_KINDS.keys()].join(', ')})`);
  return kind;
}

/** the values a planned resource shows to references: desired ones, computed ones from state or unknown */
function plannedValues(kind: ResourceKind, desired: Record<string, Resolved>, prior: Attributes | null, action: Action): Record<string, Resolved> {
  const values: Record<string, Resolved> = {};
  const fresh = action === 'create' || action === 'replace';
  values['id'] = fresh || prior === null ? UNKNOWN : (prior['id'] ?? null);
  for (const [name, attribute] of Object.entries(kind.attributes)) {
    const settableOne = attribute.required === true || attribute.optional === true;
    if (settableOne && desired[name] !== null) values[name] = desired[name] ?? null;
    else values[name] = fresh || prior === null ? (attribute.computed ? UNKNOWN : null) : (prior[name] ?? null);
  }
  return values;
}

export async function makePlan(api: Api, input: EvaluationInput, state: StateDocument): Promise<Plan> {
  const { config } = input;
  const variables = variableValues(input);
  const { refreshed, drift: changedOutside } = await refresh(api, state);
  for (const address of input.replace ?? []) {
    if (refreshed[address] === undefined || !config.resources.some((block) => block.address === address))
      throw usage(`--replace ${address}: only a resource both in the configuration and in the state can be replaced`);
  }
  const blocks = new Map(config.resources.map((block) => [block.address, block]));
  const drift = changedOutside.flatMap((item) => driftAgainst(item, blocks.get(item.address)));
  const data = await readData(api, config);
  const declared = new Set([...config.resources.map((block) => block.address), ...config.data.map((block) => block.address)]);
  const scope = new Scope(variables, data, new Map(), declared);
  const changes: PlannedChange[] = [];
  for (const address of Object.keys(refreshed).reverse()) {
    const prior = refreshed[address] as ResourceState;
    if (!declared.has(address))
      changes.push({ address, kind: RESOURCE_KINDS.get(prior.kind) as ResourceKind, action: 'delete', changes: [], forcedBy: [], block: null, prior });
  }
  for (const block of dependencyOrder(config.resources)) {
    const kind = kindOf(block);
    const desired = desiredAttributes(block, kind, scope);
    const prior = refreshed[block.address] ?? null;
    if (prior !== null && prior.kind !== kind.name) throw usage(`${block.address}: state holds a ${prior.kind}`);
    let action: Action;
    let attributeDiff: AttributeChange[] = [];
    let forcedBy: string[] = [];
    if (prior === null) {
      action = 'create';
      attributeDiff = Object.entries(desired)
        .filter(([, value]) => value !== null)
        .map(([name, value]) => ({ name, before: undefined, after: value }));
    } else {
      attributeDiff = attributeChanges(block, kind, desired, prior.attributes);
      forcedBy = attributeDiff.filter((change) => kind.attributes[change.name]?.immutable).map((change) => change.name);
      action = forcedBy.length > 0 || input.replace?.has(block.address) === true ? 'replace' : attributeDiff.length > 0 ? 'update' : 'noop';
    }
    if (action !== 'noop' && kind.validate !== undefined && isUnknownFree(desired)) await kind.validate(api, desired);
    changes.push({ address: block.address, kind, action, changes: attributeDiff, forcedBy, block, prior });
    scope.resources.set(block.address, plannedValues(kind, desired, prior?.attributes ?? null, action));
  }
  return { changes, drift, refreshed, data };
}

export const isUnknownFree = (values: Record<string, Resolved>): values is Record<string, Value> => !Object.values(values).some((value) => hasUnknown(value));
