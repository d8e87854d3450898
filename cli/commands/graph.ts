/** `graph ...`: nodes and relationships in, search, get, delete, Cypher and stats out (the /graph API). */
import type { Command, CommandContext } from '../command.js';
import { usage } from '../errors.js';
import { table } from '../output.js';
import { parseNodeRef, parseProps, readJsonArray } from '../values.js';

/** records a request carries: a transaction each on the server, so fewer and larger is faster */
const DEFAULT_BATCH_SIZE = 5000;
/** the most the server's /graph upsert routes take in one request */
const MAX_BATCH_SIZE = 10_000;
/** above this many rows a progress display is worth showing */
const PROGRESS_THRESHOLD = 1;

interface NodeInput {
  readonly label: string;
  readonly properties: Record<string, unknown>;
}

interface RelationshipInput {
  readonly type: string;
  readonly from_label: string;
  readonly from_key: string;
  readonly to_label: string;
  readonly to_key: string;
  readonly properties?: Record<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const keyText = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);

/** `{label, properties:{_key}}`, `{label, key, properties}` or `{label, _key, ...properties}` -> the API form. */
export function normalizeNode(raw: unknown, index: number): NodeInput {
  if (!isObject(raw) || typeof raw['label'] !== 'string' || raw['label'] === '') throw usage(`node ${index} has no "label"`);
  const { label, key, properties, ...rest } = raw;
  const props = isObject(properties) ? { ...properties } : { ...rest };
  const givenKey = keyText(key) ?? keyText(props['_key']);
  if (givenKey === null) throw usage(`node ${index} (${label}) has no "key" or properties._key`);
  return { label, properties: { ...props, _key: givenKey } };
}

/** `{type, from_label, from_key, to_label, to_key}` or `{type, from: "Label:key", to: "Label:key"}`. */
export function normalizeRelationship(raw: unknown, index: number): RelationshipInput {
  if (!isObject(raw) || typeof raw['type'] !== 'string' || raw['type'] === '') throw usage(`relationship ${index} has no "type"`);
  const properties = isObject(raw['properties']) ? raw['properties'] : undefined;
  const end = (side: 'from' | 'to') => {
    const reference = raw[side];
    if (typeof reference === 'string') return parseNodeRef(reference, `relationship ${index} "${side}"`);
    const label = raw[`${side}_label`];
    const key = keyText(raw[`${side}_key`]);
    if (typeof label !== 'string' || key === null) throw usage(`relationship ${index} needs "${side}" (Label:key) or ${side}_label and ${side}_key`);
    return { label, key };
  };
  const from = end('from');
  const to = end('to');
  return {
    type: raw['type'],
    from_label: from.label,
    from_key: from.key,
    to_label: to.label,
    to_key: to.key,
    ...(properties === undefined ? {} : { properties }),
  };
}

/** Sends rows in batches, with progress when there is more than one batch. */
async function upsertInBatches(
  context: CommandContext,
  kind: 'nodes' | 'relationships',
  rows: readonly unknown[],
): Promise<{ realm: string | null; upserted: number; batches: number }> {
  const api = context.api();
  const size = context.args.integer('batch-size', DEFAULT_BATCH_SIZE, 1, MAX_BATCH_SIZE);
  const realm = context.args.string('realm');
  const batches = Math.ceil(rows.length / size);
  const progress = batches > PROGRESS_THRESHOLD ? context.output.progress(`graph write-${kind === 'nodes' ? 'nodes' : 'rels'}`, rows.length, kind) : null;
  let upserted = 0;
  let answeredRealm: string | null = realm ?? null;
  for (let start = 0; start < rows.length; start += size) {
    const batch = rows.slice(start, start + size);
    const answer = await api.json<{ realm: string; upserted: number }>('POST', `/graph/${kind}`, {
      body: { ...(realm === undefined ? {} : { realm }), [kind]: batch },
    });
    upserted += answer.upserted;
    answeredRealm = answer.realm;
    progress?.tick(`batch ${start / size + 1}/${batches}`, batch.length);
  }
  progress?.stop(`upserted ${upserted} ${kind} in ${batches} batches`);
  return { realm: answeredRealm, upserted, batches };
}

const batchOptions = { realm: { type: 'string' }, 'batch-size': { type: 'string' } } as const;
const inputOptions = { file: { type: 'string' }, data: { type: 'string' }, stdin: { type: 'boolean' }, ...batchOptions } as const;
const inputUsage = [
  'exactly one of --file <path> | --data <json array> | --stdin',
  `[--realm <name>] [--batch-size <n>] (default ${DEFAULT_BATCH_SIZE}, at most ${MAX_BATCH_SIZE})`,
];

interface GraphNode {
  readonly id: string;
  readonly label: string;
  readonly key: string;
  readonly properties: Record<string, unknown>;
  readonly score?: number;
}

/** `--realm` as a query parameter; absent = the server's default realm */
const realmQuery = (context: CommandContext) => ({ realm: context.args.string('realm') });
const realmOption = { realm: { type: 'string' } } as const;

const nodeId = (reference: string, flag: string): string => {
  const { label, key } = parseNodeRef(reference, flag);
  return encodeURIComponent(`${label}:${key}`);
};

const cell = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

export const graphCommands: readonly Command[] = [
  {
    name: 'graph write-nodes',
    summary: 'Upsert an array of nodes ({label, key|properties._key, properties})',
    usage: inputUsage,
    options: inputOptions,
    run: async (context) => {
      const rows = (await readJsonArray(readInput(context), context.readStdin)).map(normalizeNode);
      const result = await upsertInBatches(context, 'nodes', rows);
      context.output.result(result, () => `upserted ${result.upserted} nodes in realm ${result.realm ?? '(default)'}`);
    },
  },
  {
    name: 'graph add-node',
    summary: 'Upsert one node',
    usage: ['--label <Label> --key <key> [--prop KEY=VALUE ...] [--realm <name>]'],
    options: { label: { type: 'string' }, key: { type: 'string' }, prop: { type: 'string', multiple: true }, realm: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const label = args.required('label');
      const key = args.required('key');
      const realm = args.string('realm');
      const answer = await api().json<{ realm: string; upserted: number }>('POST', '/graph/nodes', {
        body: { ...(realm === undefined ? {} : { realm }), nodes: [{ label, properties: { ...parseProps(args.list('prop')), _key: key } }] },
      });
      output.result(answer, () => `upserted ${label}:${key} in realm ${answer.realm}`);
    },
  },
  {
    name: 'graph write-rels',
    summary: 'Upsert an array of relationships ({type, from, to} or {type, from_label, from_key, to_label, to_key})',
    usage: inputUsage,
    options: inputOptions,
    run: async (context) => {
      const rows = (await readJsonArray(readInput(context), context.readStdin)).map(normalizeRelationship);
      const result = await upsertInBatches(context, 'relationships', rows);
      context.output.result(result, () => `upserted ${result.upserted} relationships in realm ${result.realm ?? '(default)'}`);
    },
  },
  {
    name: 'graph add-rel',
    summary: 'Upsert one relationship',
    usage: ['--type <TYPE> --from <Label:key> --to <Label:key> [--prop KEY=VALUE ...] [--realm <name>]'],
    options: {
      type: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      prop: { type: 'string', multiple: true },
      realm: { type: 'string' },
    },
    run: async ({ args, api, output }) => {
      const type = args.required('type');
      const from = parseNodeRef(args.required('from'), '--from');
      const to = parseNodeRef(args.required('to'), '--to');
      const properties = parseProps(args.list('prop'));
      const realm = args.string('realm');
      const answer = await api().json<{ realm: string; upserted: number }>('POST', '/graph/relationships', {
        body: {
          ...(realm === undefined ? {} : { realm }),
          relationships: [{ type, from_label: from.label, from_key: from.key, to_label: to.label, to_key: to.key, properties }],
        },
      });
      output.result(answer, () => `upserted (${from.label}:${from.key})-[:${type}]->(${to.label}:${to.key})`);
    },
  },
  {
    name: 'graph search',
    summary: 'Ranked text search over nodes',
    usage: ['--query <text> (required) [--limit <n>] (default 20) [--label <Label> ...] [--realm <name>]'],
    options: { query: { type: 'string' }, limit: { type: 'string' }, label: { type: 'string', multiple: true }, ...realmOption },
    run: async (context) => {
      const { args, api, output } = context;
      const query = args.required('query');
      const limit = args.integer('limit', 20, 1, 100);
      const labels = args.list('label');
      const answer = await api().json<{ items: GraphNode[]; total: number }>('GET', '/graph/search', {
        query: { query, limit, labels: labels.length === 0 ? undefined : labels.join(','), ...realmQuery(context) },
      });
      output.result(answer, () =>
        answer.items.length === 0
          ? 'no matches'
          : table(
              ['ID', 'SCORE', 'NAME'],
              answer.items.map((node) => [node.id, (node.score ?? 0).toFixed(3), cell(node.properties['name'] ?? '')]),
            ),
      );
    },
  },
  {
    name: 'graph get',
    summary: 'One node by id',
    usage: ['--id <Label:key> [--realm <name>]'],
    options: { id: { type: 'string' }, ...realmOption },
    run: async (context) => {
      const { args, api, output } = context;
      const node = await api().json<GraphNode>('GET', `/graph/nodes/${nodeId(args.required('id'), '--id')}`, { query: realmQuery(context) });
      output.result(node, () => [`${node.id}`, ...Object.entries(node.properties).map(([key, value]) => `  ${key}: ${cell(value)}`)].join('\n'));
    },
  },
  {
    name: 'graph delete',
    summary: 'Delete a node and the relationships connected to it',
    usage: ['--id <Label:key> [--realm <name>]'],
    options: { id: { type: 'string' }, ...realmOption },
    run: async (context) => {
      const { args, api, output } = context;
      const answer = await api().json<{ id: string; deleted: boolean; relationships_deleted: number }>(
        'DELETE',
        `/graph/nodes/${nodeId(args.required('id'), '--id')}`,
        { query: realmQuery(context) },
      );
      output.result(answer, () => `deleted ${answer.id} and ${answer.relationships_deleted} relationships`);
    },
  },
  {
    name: 'graph cypher',
    summary: 'Run a Cypher query (read-only unless the token may write)',
    usage: ['"<query>" [--params <json object>] [--realm <name>]'],
    options: { params: { type: 'string' }, ...realmOption },
    positionals: { min: 1, max: 1 },
    run: async ({ args, api, output }) => {
      const query = args.positionals[0] as string;
      const rawParams = args.string('params');
      let params: unknown;
      if (rawParams !== undefined) {
        try {
          params = JSON.parse(rawParams);
        } catch (error) {
          throw usage(`--params is not valid JSON: ${(error as Error).message}`);
        }
        if (!isObject(params)) throw usage('--params must be a JSON object');
      }
      const realm = args.string('realm');
      const answer = await api().json<{ columns: string[]; rows: Record<string, unknown>[] }>('POST', '/graph/cypher', {
        body: { query, ...(params === undefined ? {} : { params }), ...(realm === undefined ? {} : { realm }) },
      });
      output.result(
        answer,
        () =>
          `${table(
            answer.columns,
            answer.rows.map((row) => answer.columns.map((column) => cell(row[column]))),
          )}\n(${answer.rows.length} rows)`,
      );
    },
  },
  {
    name: 'graph stats',
    summary: 'Node and relationship counts',
    usage: ['[--labels] (adds per-label counts) [--realm <name>]'],
    options: { labels: { type: 'boolean' }, ...realmOption },
    run: async (context) => {
      const { args, api, output } = context;
      const stats = await api().json<{
        realm: string;
        node_count: number;
        relationship_count: number;
        labels?: Record<string, number>;
        relationship_types?: Record<string, number>;
      }>('GET', '/graph/stats', { query: { labels: args.flag('labels') ? 'true' : undefined, ...realmQuery(context) } });
      output.result(stats, () => {
        const lines = [`realm: ${stats.realm}`, `nodes: ${stats.node_count}`, `relationships: ${stats.relationship_count}`];
        for (const [label, count] of Object.entries(stats.labels ?? {})) lines.push(`  ${label}: ${count}`);
        for (const [type, count] of Object.entries(stats.relationship_types ?? {})) lines.push(`  [:${type}]: ${count}`);
        return lines.join('\n');
      });
    },
  },
];

function readInput({ args }: CommandContext) {
  return { file: args.string('file'), data: args.string('data'), stdin: args.flag('stdin') };
}
