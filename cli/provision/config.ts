/**
 * A configuration folder: every `.tf` (HCL, turned into JSON by
 * `@cdktf/hcl2json`) and `.tf.json` file in it, merged into variables,
 * resources, data sources and outputs. `provider` and `terraform` blocks are
 * accepted and ignored (the CLI takes SERVICE_API_URL and SERVICE_TOKEN);
 * `count`, `for_each`, modules and provisioners are refused by name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { usage } from '../errors.js';
import type { Value } from './schema.js';

interface VariableBlock {
  readonly default?: Value;
  readonly description?: string;
  readonly sensitive?: boolean;
}

export interface ResourceBlock {
  /** `service_realm.ops` */
  readonly address: string;
  readonly kind: string;
  readonly name: string;
  /** attribute values as written: strings may hold `${...}` references */
  readonly body: Readonly<Record<string, Value>>;
  readonly dependsOn: readonly string[];
}

export interface Configuration {
  readonly variables: ReadonlyMap<string, VariableBlock>;
  readonly resources: readonly ResourceBlock[];
  /** `data.service_permissions.all` */
  readonly data: readonly ResourceBlock[];
  readonly outputs: ReadonlyMap<string, { readonly value: Value; readonly sensitive: boolean }>;
}

type Json = Record<string, unknown>;
const UNSUPPORTED_META = ['count', 'for_each', 'provisioner', 'connection', 'lifecycle', 'provider'] as const;
const IGNORED_TOP = new Set(['provider', 'terraform']);
const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** HCL files come as `{kind: {name: [block]}}`, JSON files as `{kind: {name: block}}` (or a list) */
const blockOf = (value: unknown): Json => (Array.isArray(value) ? ((value[0] ?? {}) as Json) : ((value ?? {}) as Json));

async function readFile(folder: string, file: string): Promise<Json> {
  const text = readFileSync(join(folder, file), 'utf8');
  try {
    if (file.endsWith('.tf.json')) return JSON.parse(text) as Json;
    // loaded on first use: the package starts its WebAssembly parser as it is imported
    const { parse } = await import('@cdktf/hcl2json');
    return (await parse(file, text)) as Json;
  } catch (error) {
    throw usage(`${file}: ${(error as Error).message}`);
  }
}

function resourceBlocks(file: string, section: unknown, prefix: string): ResourceBlock[] {
  const out: ResourceBlock[] = [];
  for (const [kind, byName] of Object.entries((section ?? {}) as Json)) {
    for (const [name, raw] of Object.entries((byName ?? {}) as Json)) {
      if (!NAME.test(name)) throw usage(`${file}: invalid resource name "${name}"`);
      const block = { ...blockOf(raw) };
      for (const meta of UNSUPPORTED_META) if (meta in block) throw usage(`${file}: ${prefix}${kind}.${name}: "${meta}" is not supported`);
      const dependsOn = (block['depends_on'] ?? []) as string[];
      delete block['depends_on'];
      out.push({
        address: `${prefix}${kind}.${name}`,
        kind,
        name,
        body: block as Record<string, Value>,
        dependsOn: dependsOn.map((item) => item.replace(/^\$\{(.*)\}$/, '$1')),
      });
    }
  }
  return out;
}

export async function loadConfiguration(folder: string): Promise<Configuration> {
  let files: string[];
  try {
    files = readdirSync(folder)
      .filter((file) => file.endsWith('.tf') || file.endsWith('.tf.json'))
      .sort();
  } catch (error) {
    throw usage(`cannot read the configuration folder ${folder}: ${(error as Error).message}`);
  }
  if (files.length === 0) throw usage(`no .tf or .tf.json files in ${folder}`);
  const variables = new Map<string, VariableBlock>();
  const resources: ResourceBlock[] = [];
  const data: ResourceBlock[] = [];
  const outputs = new Map<string, { value: Value; sensitive: boolean }>();
  const seen = new Set<string>();
  for (const file of files) {
    const document = await readFile(folder, file);
    for (const [top, section] of Object.entries(document)) {
      if (IGNORED_TOP.has(top)) continue;
      if (top === 'variable') {
        for (const [name, raw] of Object.entries((section ?? {}) as Json)) variables.set(name, blockOf(raw));
      } else if (top === 'resource' || top === 'data') {
        for (const block of resourceBlocks(file, section, top === 'data' ? 'data.' : '')) {
          if (seen.has(block.address)) throw usage(`${file}: ${block.address} is declared twice`);
          seen.add(block.address);
          (top === 'data' ? data : resources).push(block);
        }
      } else if (top === 'output') {
        for (const [name, raw] of Object.entries((section ?? {}) as Json)) {
          const block = blockOf(raw);
          outputs.set(name, { value: (block['value'] ?? null) as Value, sensitive: block['sensitive'] === true });
        }
      } else {
        throw usage(`${file}: "${top}" blocks are not supported (variable, resource, data, output, provider and terraform are)`);
      }
    }
  }
  return { variables, resources, data, outputs };
}
