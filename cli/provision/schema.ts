/**
 * The attribute schema of a provisioning resource kind: the one description
 * the CLI's plan/apply engine, the Terraform provider and the generated docs
 * all read. A kind also says how its state is created, read, updated and
 * deleted over the REST API.
 */
import type { ApiClient } from '../api.js';

/** the value forms an attribute may hold (HCL and cty types: string, number, bool, list(string), map(string), and JSON objects) */
type AttributeType = 'string' | 'number' | 'bool' | 'list_string' | 'map_string' | 'json';

export type Value = string | number | boolean | null | readonly Value[] | { readonly [key: string]: Value };
export type Attributes = Readonly<Record<string, Value>>;

export interface Attribute {
  readonly type: AttributeType;
  readonly description: string;
  /** must be set in configuration */
  readonly required?: true;
  /** set by the server (ids, URLs, secrets issued at creation); with `optional`, set by the server when configuration leaves it out */
  readonly computed?: true;
  readonly optional?: true;
  /** kept in state, shown as (sensitive) in plans and `state show` */
  readonly sensitive?: true;
  /** a change forces replacement (delete, then create) */
  readonly immutable?: true;
  /** the value an optional attribute takes when configuration leaves it out */
  readonly default?: Value;
}

export type AttributeMap = Readonly<Record<string, Attribute>>;

/** What a kind's API functions get: the HTTP client of the CLI. */
export type Api = Pick<ApiClient, 'json'>;

export interface ResourceKind {
  /** `service_realm` */
  readonly name: string;
  readonly description: string;
  /** every attribute but `id`, which every kind has (computed) */
  readonly attributes: AttributeMap;
  /** creates the object; answers its state (id and every attribute) */
  create(api: Api, desired: Attributes): Promise<Attributes>;
  /**
   * the live state, or null when the object is gone; sensitive values the API masks come back null (the engine keeps the applied ones).
   * `prior` (the state's attributes, absent at import) lets a kind put applied secrets back where the API masks only part of a value
   * (a config object with masked fields), so a mask alone never shows as drift.
   */
  read(api: Api, id: string, prior?: Attributes): Promise<Attributes | null>;
  /** changes attributes in place; `prior` is the state before */
  update(api: Api, id: string, desired: Attributes, prior: Attributes): Promise<Attributes>;
  delete(api: Api, id: string): Promise<void>;
  /**
   * Replace by creating the new object first and deleting the old one at the
   * end of the apply, once dependents point at the new one (Terraform's
   * create_before_destroy): for kinds whose old object cannot go while others
   * still use it (a realm holding memory) and whose immutable attribute is
   * its unique name, so both can exist at once.
   */
  readonly createBeforeDestroy?: true;
  /** checks the desired attributes against the server at plan time (a policy's Rego); throws a CliError naming the problem */
  validate?(api: Api, desired: Attributes): Promise<void>;
}

export interface DataSourceKind {
  readonly name: string;
  readonly description: string;
  readonly attributes: AttributeMap;
  read(api: Api): Promise<Attributes>;
}

/** attributes configuration may set (everything not purely computed) */
export const settable = (attributes: AttributeMap): [string, Attribute][] =>
  Object.entries(attributes).filter(([, attribute]) => attribute.required === true || attribute.optional === true);
