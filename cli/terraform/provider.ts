/**
 * The provider's answers to Terraform, over the same kinds, schemas and REST
 * calls as `provision` (cli/provision/kinds/): whatever `RESOURCE_KINDS` and
 * `DATA_SOURCES` hold is served. Every RPC answers diagnostics for what goes
 * wrong (never a gRPC error): a failed API call, a value of the wrong type, a
 * provider that is not configured.
 *
 * Mapping to Terraform's schema: every kind gets a computed `id`; an
 * attribute with a default is optional+computed (Terraform allows a planned
 * value other than configuration's only for computed attributes); `json`
 * attributes are `dynamic` (an HCL object literal is accepted as is).
 */
import { ApiClient, readEnvironment } from '../api.js';
import { CliError } from '../errors.js';
import { UNKNOWN, hasUnknown, type Resolved } from '../provision/expressions.js';
import { DATA_SOURCES, RESOURCE_KINDS } from '../provision/kinds/index.js';
import type { Attribute, AttributeMap, Attributes, DataSourceKind, ResourceKind, Value } from '../provision/schema.js';
import { isUnknownFree } from '../provision/plan.js';
import { checkType, sameValue } from '../provision/values.js';
import { decodeDynamic, encodeDynamic, fromJson, typeBytes, type CtyType, type DynamicValue } from './cty.js';

type Values = Record<string, Resolved>;
type Step = { attribute_name: string };
interface Diagnostic {
  severity: 'ERROR' | 'WARNING';
  summary: string;
  detail: string;
  attribute?: { steps: Step[] };
}

const ATTRIBUTE_TYPES: Record<Attribute['type'], CtyType> = {
  string: 'string',
  number: 'number',
  bool: 'bool',
  list_string: ['list', 'string'],
  map_string: ['map', 'string'],
  json: 'dynamic',
};

const ID_DESCRIPTION = "the object's id on the server";
const PROVIDER_ATTRIBUTES = {
  endpoint: { type: 'string', description: 'the API root including /api/v1 (default: SERVICE_API_URL)' },
  token: { type: 'string', sensitive: true, description: 'an API token of the organization (default: SERVICE_TOKEN)' },
  realm: { type: 'string', description: 'the realm of resources whose `realm` attribute configuration leaves out (default: their own default)' },
} as const;
const PROVIDER_TYPE: CtyType = ['object', { endpoint: 'string', token: 'string', realm: 'string' }];

const isSettable = (attribute: Attribute): boolean => attribute.required === true || attribute.optional === true;
/** computed in Terraform's sense: the provider may plan a value configuration did not give */
const isComputed = (attribute: Attribute): boolean => attribute.computed === true || attribute.default !== undefined;

const objectType = (attributes: AttributeMap): CtyType => [
  'object',
  { id: 'string', ...Object.fromEntries(Object.entries(attributes).map(([name, attribute]) => [name, ATTRIBUTE_TYPES[attribute.type]])) },
];

function schemaOf(description: string, attributes: AttributeMap, dataSource: boolean): object {
  return {
    version: 0,
    block: {
      version: 0,
      description,
      description_kind: 'MARKDOWN',
      attributes: [
        { name: 'id', type: typeBytes('string'), description: ID_DESCRIPTION, computed: true, description_kind: 'MARKDOWN' },
        ...Object.entries(attributes).map(([name, attribute]) => ({
          name,
          type: typeBytes(ATTRIBUTE_TYPES[attribute.type]),
          description: attribute.immutable ? `${attribute.description} (changing it forces replacement)` : attribute.description,
          description_kind: 'MARKDOWN',
          required: !dataSource && attribute.required === true,
          optional: !dataSource && attribute.required !== true && attribute.optional === true,
          computed: dataSource || isComputed(attribute),
          sensitive: attribute.sensitive === true,
        })),
      ],
    },
  };
}

const errorDiagnostic = (summary: string, detail: string, attribute?: string): Diagnostic => ({
  severity: 'ERROR',
  summary,
  detail,
  ...(attribute === undefined ? {} : { attribute: { steps: [{ attribute_name: attribute }] } }),
});

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const asRecord = (value: Resolved): Values | null =>
  value !== null && value !== UNKNOWN && typeof value === 'object' && !Array.isArray(value) ? (value as Values) : null;

/** `next` with each value equal to `before`'s taken from `before` (keeps the exact cty type Terraform gave) */
function keepEqual(next: Values, before: Values | null): Values {
  if (before === null) return next;
  const out: Values = {};
  for (const [name, value] of Object.entries(next)) out[name] = before[name] !== undefined && sameValue(value, before[name]) ? before[name] : value;
  return out;
}

export class TerraformProvider {
  private api: ApiClient | null = null;
  private realm: string | null = null;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly trace: (line: string) => void = () => undefined,
  ) {}

  /** runs an RPC body; a thrown error becomes an error diagnostic beside the fields of `empty` */
  private async guard(summary: string, body: () => Promise<object>, empty: object = {}): Promise<object> {
    try {
      const result = (await body()) as { diagnostics?: Diagnostic[] };
      return { ...result, diagnostics: result.diagnostics ?? [] };
    } catch (error) {
      return { ...empty, diagnostics: [errorDiagnostic(summary, messageOf(error))] };
    }
  }

  private client(): ApiClient {
    if (this.api === null) throw new CliError('usage', 'the provider is not configured: Terraform calls ConfigureProvider before using resources');
    return this.api;
  }

  private resourceKind(typeName: string): ResourceKind {
    const kind = RESOURCE_KINDS.get(typeName);
    if (!kind) throw new CliError('usage', `unknown resource type ${typeName} (known: ${[...RESOURCE_KINDS.keys()].join(', ')})`);
    return kind;
  }

  private dataKind(typeName: string): DataSourceKind {
    const kind = DATA_SOURCES.get(typeName);
    if (!kind) throw new CliError('usage', `unknown data source ${typeName} (known: ${[...DATA_SOURCES.keys()].join(', ')})`);
    return kind;
  }

  getMetadata() {
    return {
      server_capabilities: { plan_destroy: false, get_provider_schema_optional: false },
      diagnostics: [],
      resources: [...RESOURCE_KINDS.keys()].map((type_name) => ({ type_name })),
      data_sources: [...DATA_SOURCES.keys()].map((type_name) => ({ type_name })),
    };
  }

  getProviderSchema() {
    return {
      provider: {
        version: 0,
        block: {
          version: 0,
          description: 'The service: its API root and an API token of the organization to manage.',
          description_kind: 'MARKDOWN',
          attributes: Object.entries(PROVIDER_ATTRIBUTES).map(([name, attribute]) => ({
            name,
            type: typeBytes(attribute.type),
            description: attribute.description,
            description_kind: 'MARKDOWN',
            optional: true,
            sensitive: 'sensitive' in attribute,
          })),
        },
      },
      resource_schemas: Object.fromEntries([...RESOURCE_KINDS.values()].map((kind) => [kind.name, schemaOf(kind.description, kind.attributes, false)])),
      data_source_schemas: Object.fromEntries([...DATA_SOURCES.values()].map((kind) => [kind.name, schemaOf(kind.description, kind.attributes, true)])),
      server_capabilities: { plan_destroy: false, get_provider_schema_optional: false },
      diagnostics: [],
    };
  }

  getResourceIdentitySchemas() {
    return { identity_schemas: {}, diagnostics: [] };
  }

  validateProviderConfig(request: { config?: DynamicValue }) {
    return this.guard('Invalid provider configuration', async () => {
      const config = asRecord(decodeDynamic(request.config, PROVIDER_TYPE)) ?? {};
      const endpoint = config['endpoint'];
      if (typeof endpoint === 'string' && !URL.canParse(endpoint)) {
        return { diagnostics: [errorDiagnostic('Invalid endpoint', `"${endpoint}" is not a URL: give the API root including /api/v1`, 'endpoint')] };
      }
      return {};
    });
  }

  configureProvider(request: { config?: DynamicValue }) {
    return this.guard('Cannot configure the provider', async () => {
      const config = asRecord(decodeDynamic(request.config, PROVIDER_TYPE)) ?? {};
      if (hasUnknown(config)) throw new CliError('usage', 'the provider configuration depends on values known only after apply');
      const text = (name: string): string | undefined => (typeof config[name] === 'string' ? config[name] : undefined);
      // readEnvironment checks both and says which is missing
      const environment = readEnvironment({
        SERVICE_API_URL: text('endpoint') ?? this.env['SERVICE_API_URL'],
        SERVICE_TOKEN: text('token') ?? this.env['SERVICE_TOKEN'],
      });
      this.api = new ApiClient(environment, this.trace);
      this.realm = text('realm') ?? null;
      return {};
    });
  }

  validateResourceConfig(request: { type_name: string; config?: DynamicValue }) {
    return this.guard('Invalid resource configuration', async () => {
      const kind = this.resourceKind(request.type_name);
      return { diagnostics: validate(kind.name, kind.attributes, asRecord(decodeDynamic(request.config, objectType(kind.attributes))) ?? {}) };
    });
  }

  validateDataResourceConfig(request: { type_name: string; config?: DynamicValue }) {
    return this.guard('Invalid data source configuration', async () => {
      this.dataKind(request.type_name);
      return {};
    });
  }

  upgradeResourceState(request: { type_name: string; raw_state?: { json?: Buffer; flatmap?: Record<string, string> } }) {
    return this.guard('Cannot upgrade the resource state', async () => {
      const kind = this.resourceKind(request.type_name);
      const type = objectType(kind.attributes);
      const raw = request.raw_state?.json;
      if (!raw || raw.length === 0) {
        if (request.raw_state?.flatmap && Object.keys(request.raw_state.flatmap).length > 0) {
          throw new CliError('usage', 'a flatmap (Terraform 0.11) state cannot be upgraded: import the resource again');
        }
        return { upgraded_state: encodeDynamic(null, type) };
      }
      const json = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      // attributes an older schema had and this one has not are dropped; new ones start null
      return { upgraded_state: encodeDynamic(fromJson(json, type), type) };
    });
  }

  readResource(request: { type_name: string; current_state?: DynamicValue; private?: Buffer }) {
    return this.guard('Cannot read the resource', async () => {
      const kind = this.resourceKind(request.type_name);
      const type = objectType(kind.attributes);
      const current = asRecord(decodeDynamic(request.current_state, type));
      const id = current?.['id'];
      if (current === null || typeof id !== 'string') return { new_state: encodeDynamic(null, type), private: request.private ?? Buffer.alloc(0) };
      // the prior state lets a kind put applied secrets back where the API masks them (a source config, a gateway key)
      const live = await kind.read(this.client(), id, current as Attributes);
      // gone outside Terraform: a null state makes Terraform plan a create
      if (live === null) return { new_state: encodeDynamic(null, type), private: request.private ?? Buffer.alloc(0) };
      return { new_state: encodeDynamic(stateValues(kind, live, current), type), private: request.private ?? Buffer.alloc(0) };
    });
  }

  planResourceChange(request: {
    type_name: string;
    prior_state?: DynamicValue;
    proposed_new_state?: DynamicValue;
    config?: DynamicValue;
    prior_private?: Buffer;
  }) {
    return this.guard('Cannot plan the change', async () => {
      const kind = this.resourceKind(request.type_name);
      const type = objectType(kind.attributes);
      const prior = asRecord(decodeDynamic(request.prior_state, type));
      const proposed = asRecord(decodeDynamic(request.proposed_new_state, type));
      const config = asRecord(decodeDynamic(request.config, type));
      if (proposed === null || config === null) return { planned_state: encodeDynamic(null, type), requires_replace: [] };
      const { planned, replace, changed } = planChange(kind, prior, config, this.realm);
      // checks against the server (a policy's Rego, a channel type of the catalog) fail the plan, before a replacement deletes anything
      const desired: Values = {};
      for (const [name, attribute] of Object.entries(kind.attributes)) if (isSettable(attribute)) desired[name] = planned[name] ?? null;
      if (changed && kind.validate !== undefined && isUnknownFree(desired)) await kind.validate(this.client(), desired);
      return {
        planned_state: encodeDynamic(planned, type),
        requires_replace: replace.map((name) => ({ steps: [{ attribute_name: name }] })),
        planned_private: request.prior_private ?? Buffer.alloc(0),
      };
    });
  }

  applyResourceChange(request: { type_name: string; prior_state?: DynamicValue; planned_state?: DynamicValue; config?: DynamicValue }) {
    return this.guard('Cannot apply the change', async () => {
      const kind = this.resourceKind(request.type_name);
      const type = objectType(kind.attributes);
      const prior = asRecord(decodeDynamic(request.prior_state, type));
      const planned = asRecord(decodeDynamic(request.planned_state, type));
      const api = this.client();
      if (planned === null) {
        if (prior !== null && typeof prior['id'] === 'string') await kind.delete(api, prior['id']);
        return { new_state: encodeDynamic(null, type) };
      }
      const config = asRecord(decodeDynamic(request.config, type)) ?? {};
      const desired: Record<string, Value> = {};
      for (const [name, attribute] of Object.entries(kind.attributes)) {
        if (!isSettable(attribute)) continue;
        // optional+computed and left out: the server keeps or chooses it, as the CLI engine leaves it null
        const value = planned[name] === UNKNOWN && (config[name] ?? null) === null ? null : (planned[name] ?? null);
        if (hasUnknown(value)) throw new CliError('usage', `${kind.name}: "${name}" is still unknown at apply`);
        desired[name] = value as Value;
      }
      const priorId = prior?.['id'];
      const result =
        prior === null || typeof priorId !== 'string' ? await kind.create(api, desired) : await kind.update(api, priorId, desired, prior as Attributes);
      if (typeof result['id'] !== 'string' || result['id'] === '') throw new CliError('api_error', `${kind.name}: the server answered no id`);
      const state: Values = { ...result };
      // sensitive values the API masks: the applied ones, as the CLI engine keeps them
      for (const [name, attribute] of Object.entries(kind.attributes)) if (attribute.sensitive && desired[name] !== undefined) state[name] = desired[name];
      return { new_state: encodeDynamic(stateValues(kind, state, planned), type) };
    });
  }

  importResourceState(request: { type_name: string; id: string }) {
    return this.guard('Cannot import the resource', async () => {
      const kind = this.resourceKind(request.type_name);
      const live = await kind.read(this.client(), request.id);
      if (live === null) throw new CliError('not_found', `no ${kind.name} with id "${request.id}" exists`);
      return {
        imported_resources: [
          { type_name: kind.name, state: encodeDynamic(stateValues(kind, live, null), objectType(kind.attributes)), private: Buffer.alloc(0) },
        ],
      };
    });
  }

  readDataSource(request: { type_name: string; config?: DynamicValue }) {
    return this.guard('Cannot read the data source', async () => {
      const kind = this.dataKind(request.type_name);
      const values = await kind.read(this.client());
      return { state: encodeDynamic(stateValues(kind, values, null), objectType(kind.attributes)) };
    });
  }
}

/** every attribute of the kind (absent ones null), values equal to `before`'s kept as Terraform gave them, masked sensitive ones kept from `before` */
function stateValues(kind: { attributes: AttributeMap }, values: Readonly<Record<string, Resolved>>, before: Values | null): Values {
  const out: Values = { id: values['id'] ?? null };
  for (const [name, attribute] of Object.entries(kind.attributes)) {
    const value = values[name] ?? null;
    // `before` is the planned state at apply: an attribute planned unknown takes what the server answered
    out[name] = attribute.sensitive && value === null && before !== null && before[name] !== UNKNOWN ? (before[name] ?? null) : value;
  }
  return keepEqual(out, before);
}

/** type and presence checks of known values (Terraform checks names and types against the schema too) */
function validate(kindName: string, attributes: AttributeMap, config: Values): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const [name, attribute] of Object.entries(attributes)) {
    const value = config[name] ?? null;
    if (attribute.required && value === null) diagnostics.push(errorDiagnostic('Missing required attribute', `${kindName}: "${name}" is required`, name));
    try {
      checkType(kindName, name, attribute, value);
    } catch (error) {
      diagnostics.push(errorDiagnostic('Invalid attribute value', messageOf(error), name));
    }
  }
  return diagnostics;
}

/**
 * The planned state: configuration's values; for what configuration leaves
 * out, the default (or the provider's realm), else the prior value of a
 * computed attribute, unknown when the object is new. Immutable attributes
 * that change (or are not known yet) force replacement.
 */
function planChange(kind: ResourceKind, prior: Values | null, config: Values, realm: string | null): { planned: Values; replace: string[]; changed: boolean } {
  const fresh = prior === null;
  const planned: Values = { id: fresh ? UNKNOWN : (prior['id'] ?? null) };
  for (const [name, attribute] of Object.entries(kind.attributes)) {
    const configured = config[name] ?? null;
    if (isSettable(attribute) && configured !== null) planned[name] = configured;
    else if (isSettable(attribute) && name === 'realm' && realm !== null) planned[name] = realm;
    else if (isSettable(attribute) && attribute.default !== undefined) planned[name] = attribute.default;
    else if (attribute.computed) planned[name] = fresh ? UNKNOWN : (prior[name] ?? null);
    else planned[name] = null;
  }
  if (fresh) return { planned, replace: [], changed: true };
  const changed = Object.entries(kind.attributes).filter(([name, attribute]) => isSettable(attribute) && !sameValue(planned[name], prior[name]));
  // a server-computed attribute may change with any update
  if (changed.length > 0) for (const [name, attribute] of Object.entries(kind.attributes)) if (!isSettable(attribute)) planned[name] = UNKNOWN;
  const replace = changed.filter(([, attribute]) => attribute.immutable === true).map(([name]) => name);
  return { planned, replace, changed: changed.length > 0 };
}
