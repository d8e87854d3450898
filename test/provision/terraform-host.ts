/**
 * Terraform's side of the plugin protocol, for the tests: starts
 * `service-proxy-cli terraform-provider` as go-plugin does (the magic cookie,
 * a client certificate in PLUGIN_CLIENT_CERT), reads the handshake line,
 * connects with grpc-js over mutual TLS trusting only the certificate the
 * line carries, and drives the tfplugin6 RPCs from the .proto files. Values
 * are written and read with its own small msgpack codec following the wire
 * format (cty types from the provider's schema, unknown = extension 0,
 * dynamic = [type JSON, value]), not with the provider's code, and plans and
 * applies are checked the way Terraform checks them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { decode, encode, ExtData } from '@msgpack/msgpack';
import forge from 'node-forge';
import { expect } from 'vitest';
import { MAGIC_COOKIE_VALUE, PROTO_FILES, selfSignedCertificate } from '../../cli/terraform/plugin.js';
import { CLI_ENTRY, PROJECT_ROOT, TSX_LOADER } from '../cli/run-cli.js';

export const UNKNOWN = Symbol('unknown');
type Type = string | [string, any];
export type Obj = Record<string, any>;
interface SchemaAttribute {
  name: string;
  type: Type;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
}
export interface Diagnostic {
  severity: string;
  summary: string;
  detail: string;
}

// ---- values on the wire, as Terraform writes and reads them ---------------

function toWire(value: any, type: Type): unknown {
  if (value === UNKNOWN) return new ExtData(0, new Uint8Array([0]));
  if (value === null || value === undefined) return null;
  if (type === 'dynamic') {
    const actual = literalType(value);
    return [Buffer.from(JSON.stringify(actual)), toWire(value, actual)];
  }
  if (typeof type === 'string') return value;
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set') return (value as any[]).map((item) => toWire(item, inner));
  if (kind === 'tuple') return (value as any[]).map((item, index) => toWire(item, inner[index]));
  if (kind === 'map') return Object.fromEntries(Object.entries(value as Obj).map(([key, item]) => [key, toWire(item, inner)]));
  return Object.fromEntries(Object.entries(inner as Record<string, Type>).map(([name, attributeType]) => [name, toWire((value as Obj)[name], attributeType)]));
}

function fromWire(raw: any, type: Type): any {
  if (raw instanceof ExtData) {
    expect([0, 12]).toContain(raw.type);
    return UNKNOWN;
  }
  if (raw === null || raw === undefined) return null;
  if (type === 'dynamic') {
    expect(Array.isArray(raw) && raw.length === 2, 'a dynamic value is [type, value]').toBe(true);
    return fromWire(raw[1], JSON.parse(Buffer.from(raw[0] as Uint8Array).toString('utf8')) as Type);
  }
  if (typeof type === 'string') return raw;
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set') return (raw as any[]).map((item) => fromWire(item, inner));
  if (kind === 'tuple') return (raw as any[]).map((item, index) => fromWire(item, inner[index]));
  if (kind === 'map') return Object.fromEntries(Object.entries(raw as Obj).map(([key, item]) => [key, fromWire(item, inner)]));
  // an object value carries every attribute of its type
  expect(Object.keys(raw as Obj).sort()).toEqual(Object.keys(inner as Obj).sort());
  return Object.fromEntries(Object.entries(inner as Record<string, Type>).map(([name, attributeType]) => [name, fromWire((raw as Obj)[name], attributeType)]));
}

/** the type HCL gives a literal: objects and tuples */
function literalType(value: any): Type {
  if (Array.isArray(value)) return ['tuple', value.map(literalType)];
  if (value !== null && typeof value === 'object')
    return ['object', Object.fromEntries(Object.entries(value as Obj).map(([key, item]) => [key, literalType(item)]))];
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : 'dynamic';
}

const encodeValue = (value: Obj | null, type: Type) => ({ msgpack: Buffer.from(encode(toWire(value, type))) });
const decodeValue = (dynamic: { msgpack?: Buffer } | null | undefined, type: Type): Obj | null =>
  dynamic?.msgpack && dynamic.msgpack.length > 0 ? (fromWire(decode(dynamic.msgpack), type) as Obj | null) : null;

const equal = (a: any, b: any): boolean => {
  if (a === b) return true;
  if (a === UNKNOWN || b === UNKNOWN || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = new Set([...Object.keys(a as Obj), ...Object.keys(b as Obj)]);
  return Array.isArray(a) === Array.isArray(b) && [...keys].every((key) => equal((a as Obj)[key], (b as Obj)[key]));
};

// ---- the plugin process ----------------------------------------------------

type Call = (request: object) => Promise<any>;
const promisify =
  (client: grpc.Client, method: string): Call =>
  (request) =>
    new Promise((resolve, reject) => {
      (client as unknown as Record<string, (r: object, cb: (e: Error | null, v: unknown) => void) => void>)[method]?.call(client, request, (error, value) =>
        error ? reject(error) : resolve(value),
      );
    });

export interface Handshake {
  readonly core: string;
  readonly protocol: string;
  readonly network: string;
  readonly address: string;
  readonly kind: string;
  readonly certDer: Buffer;
}

export class TerraformHost {
  readonly diagnostics: Diagnostic[] = [];
  private schemas = new Map<string, { type: Type; attributes: SchemaAttribute[] }>();
  private dataSchemas = new Map<string, { type: Type; attributes: SchemaAttribute[] }>();
  stderr = '';

  private constructor(
    readonly child: ChildProcess,
    readonly handshake: Handshake,
    readonly provider: grpc.Client,
    readonly packages: any,
    readonly credentials: grpc.ChannelCredentials,
  ) {}

  static async start(env: Record<string, string> = {}): Promise<TerraformHost> {
    const clientCert = selfSignedCertificate('terraform');
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'terraform-provider'], {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        TF_PLUGIN_MAGIC_COOKIE: MAGIC_COOKIE_VALUE,
        PLUGIN_CLIENT_CERT: clientCert.certPem,
        PLUGIN_PROTOCOL_VERSIONS: '6',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const line = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the provider exited (${code}) before the handshake: ${stderr}`)));
    });
    const [core, protocol, network, address, kind, cert] = line.split('|') as [string, string, string, string, string, string];
    // go's base64.RawStdEncoding: no padding
    expect(cert).not.toContain('=');
    const handshake = { core, protocol, network, address, kind, certDer: Buffer.from(cert, 'base64') };
    const serverPem = forge.pki.certificateToPem(forge.pki.certificateFromAsn1(forge.asn1.fromDer(handshake.certDer.toString('binary'))));
    const credentials = grpc.credentials.createSsl(Buffer.from(serverPem), Buffer.from(clientCert.keyPem), Buffer.from(clientCert.certPem));
    const packages = grpc.loadPackageDefinition(
      protoLoader.loadSync(PROTO_FILES, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true }),
    ) as any;
    const provider = new packages.tfplugin6.Provider(address, credentials, { 'grpc.ssl_target_name_override': 'localhost' }) as grpc.Client;
    const host = new TerraformHost(child, handshake, provider, packages, credentials);
    child.stderr?.on('data', (chunk: Buffer) => (host.stderr += chunk.toString('utf8')));
    return host;
  }

  /** a client of another service on the same connection settings */
  client(service: grpc.ServiceClientConstructor, credentials = this.credentials): grpc.Client {
    return new service(this.handshake.address, credentials, { 'grpc.ssl_target_name_override': 'localhost' });
  }

  call(method: string, request: object = {}, client: grpc.Client = this.provider): Promise<any> {
    return promisify(client, method)(request);
  }

  /** an RPC whose answer must carry no error diagnostics */
  async ok(method: string, request: object = {}): Promise<any> {
    const response = await this.call(method, request);
    const errors = ((response.diagnostics ?? []) as Diagnostic[]).filter((item) => item.severity === 'ERROR');
    expect(errors, `${method}: ${JSON.stringify(errors)}\n${this.stderr}`).toEqual([]);
    return response;
  }

  async loadSchema(): Promise<any> {
    const response = await this.ok('GetProviderSchema');
    const read = (schema: any) => {
      const attributes: SchemaAttribute[] = schema.block.attributes.map((attribute: any) => ({
        ...attribute,
        type: JSON.parse(Buffer.from(attribute.type as Buffer).toString('utf8')) as Type,
      }));
      return { attributes, type: ['object', Object.fromEntries(attributes.map((attribute) => [attribute.name, attribute.type]))] as Type };
    };
    for (const [name, schema] of Object.entries(response.resource_schemas as Obj)) this.schemas.set(name, read(schema));
    for (const [name, schema] of Object.entries(response.data_source_schemas as Obj)) this.dataSchemas.set(name, read(schema));
    return response;
  }

  schema(typeName: string) {
    const schema = this.schemas.get(typeName);
    if (!schema) throw new Error(`no schema for ${typeName}`);
    return schema;
  }

  async configure(endpoint: string, token: string): Promise<void> {
    const config = encodeValue({ endpoint, token, realm: null }, ['object', { endpoint: 'string', token: 'string', realm: 'string' }]);
    await this.ok('ValidateProviderConfig', { config });
    await this.ok('ConfigureProvider', { terraform_version: '1.9.0', config });
  }

  /** the full configuration object: attributes not given are null */
  configOf(typeName: string, given: Obj): Obj {
    const { attributes } = this.schema(typeName);
    for (const name of Object.keys(given)) expect(attributes.map((attribute) => attribute.name)).toContain(name);
    return Object.fromEntries(attributes.map((attribute) => [attribute.name, given[attribute.name] ?? null]));
  }

  /**
   * PlanResourceChange as Terraform calls it: the proposed new state is the
   * configuration with prior values for computed attributes it leaves null.
   * Checks the answer as Terraform does: a non-computed attribute is planned
   * as configured. Answers the action too.
   */
  async plan(typeName: string, prior: Obj | null, config: Obj | null): Promise<{ planned: Obj | null; replace: string[]; action: string }> {
    const { type, attributes } = this.schema(typeName);
    if (config !== null) await this.ok('ValidateResourceConfig', { type_name: typeName, config: encodeValue(config, type) });
    const proposed =
      config === null
        ? null
        : Object.fromEntries(
            attributes.map((attribute) => [
              attribute.name,
              attribute.computed && config[attribute.name] === null ? (prior?.[attribute.name] ?? null) : config[attribute.name],
            ]),
          );
    const response = await this.ok('PlanResourceChange', {
      type_name: typeName,
      prior_state: encodeValue(prior, type),
      proposed_new_state: encodeValue(proposed, type),
      config: encodeValue(config, type),
    });
    const planned = decodeValue(response.planned_state, type);
    const replace = (response.requires_replace as { steps: { attribute_name: string }[] }[]).map((path) =>
      path.steps.map((step) => step.attribute_name).join('.'),
    );
    if (config !== null && planned !== null) {
      for (const attribute of attributes) {
        if (!attribute.computed || config[attribute.name] !== null) {
          expect(equal(planned[attribute.name], config[attribute.name]), `${typeName}.${attribute.name}: planned as configured`).toBe(true);
        }
      }
    }
    const action = planned === null ? 'delete' : prior === null ? 'create' : replace.length > 0 ? 'replace' : equal(planned, prior) ? 'noop' : 'update';
    return { planned, replace, action };
  }

  /** ApplyResourceChange; the new state must keep every value the plan knew */
  async apply(typeName: string, prior: Obj | null, planned: Obj | null, config: Obj | null): Promise<Obj | null> {
    const { type } = this.schema(typeName);
    const response = await this.ok('ApplyResourceChange', {
      type_name: typeName,
      prior_state: encodeValue(prior, type),
      planned_state: encodeValue(planned, type),
      config: encodeValue(config, type),
    });
    const state = decodeValue(response.new_state, type);
    if (planned === null) expect(state).toBeNull();
    else {
      expect(state).not.toBeNull();
      for (const [name, value] of Object.entries(planned)) {
        if (value !== UNKNOWN) expect(equal((state as Obj)[name], value), `${typeName}.${name}: applied as planned`).toBe(true);
        else expect((state as Obj)[name], `${typeName}.${name}: known after apply`).not.toBe(UNKNOWN);
      }
    }
    return state;
  }

  /**
   * plan then apply; a replacement is destroy-then-create as Terraform does it (the create planned again from a null prior).
   * `forceReplace`: replaced whatever the plan says, as `terraform apply -replace=ADDRESS` does.
   */
  async converge(
    typeName: string,
    prior: Obj | null,
    config: Obj,
    { forceReplace = false }: { forceReplace?: boolean } = {},
  ): Promise<{ state: Obj; action: string; replace: string[] }> {
    const planning = await this.plan(typeName, prior, config);
    const { planned, replace } = planning;
    const action = forceReplace && prior !== null ? 'replace' : planning.action;
    if (action === 'noop') return { state: prior as Obj, action, replace };
    if (action === 'replace') {
      const destroy = await this.plan(typeName, prior, null);
      await this.apply(typeName, prior, destroy.planned, null);
      const create = await this.plan(typeName, null, config);
      return { state: (await this.apply(typeName, null, create.planned, config)) as Obj, action, replace };
    }
    return { state: (await this.apply(typeName, prior, planned, config)) as Obj, action, replace };
  }

  async read(typeName: string, state: Obj): Promise<Obj | null> {
    const { type } = this.schema(typeName);
    const response = await this.ok('ReadResource', { type_name: typeName, current_state: encodeValue(state, type) });
    return decodeValue(response.new_state, type);
  }

  async import(typeName: string, id: string): Promise<Obj> {
    const response = await this.ok('ImportResourceState', { type_name: typeName, id });
    expect(response.imported_resources).toHaveLength(1);
    expect(response.imported_resources[0].type_name).toBe(typeName);
    return decodeValue(response.imported_resources[0].state, this.schema(typeName).type) as Obj;
  }

  async readData(typeName: string): Promise<Obj> {
    const schema = this.dataSchemas.get(typeName);
    if (!schema) throw new Error(`no data source schema for ${typeName}`);
    const config = Object.fromEntries(schema.attributes.map((attribute) => [attribute.name, null]));
    await this.ok('ValidateDataResourceConfig', { type_name: typeName, config: encodeValue(config, schema.type) });
    const response = await this.ok('ReadDataSource', { type_name: typeName, config: encodeValue(config, schema.type) });
    return decodeValue(response.state, schema.type) as Obj;
  }

  /** GRPCController.Shutdown, as go-plugin ends a plugin; answers the exit code */
  async shutdown(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.child.exitCode !== null) resolve(this.child.exitCode);
      else this.child.once('exit', (code) => resolve(code));
    });
    await this.call('Shutdown', {}, this.client(this.packages.plugin.GRPCController as grpc.ServiceClientConstructor));
    this.provider.close();
    return exited;
  }

  kill(): void {
    this.provider.close();
    if (this.child.exitCode === null) this.child.kill();
  }
}

export { encodeValue, decodeValue };
