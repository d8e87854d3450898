/**
 * Graph benchmark: upserts N nodes (Service, with a name and a description
 * of a few words) and 2N DEPENDS_ON relationships through the HTTP API in
 * batches of 10,000 (the most one request takes), four requests in flight
 * unless told otherwise, to a real server process (nodes first, then
 * relationships; request bodies are built before the clock starts), then times
 * one-word text searches (each word matches 1/12 of the nodes) and a
 * 2-hop Cypher query; in the same run, bulk-loads the same data straight into
 * a fresh Kùzu database (same engine settings as the server's) with COPY from
 * CSV, and loads it again in COPYs of one request's size, a transaction each.
 * The ratios are against the COPY (and COMMIT) statements alone; the time to
 * write the CSV files from the same rows is printed beside them.
 *
 *   npm run bench:graph [-- --quick] [-- --nodes N] [-- --concurrency N]
 *
 * Then the same rows again through POST /graph/import into fresh realms, as
 * CSV (a nodes file and a relationships file) and as one NDJSON body, timed
 * from the first byte sent to the last answer (bodies built before).
 *
 * Last line: one JSON object with upsert_rows_per_s, bulk_rows_per_s,
 * ratio_vs_bulk, incremental_rows_per_s, ratio_vs_incremental,
 * import_rows_per_s (CSV) and ratio_import_vs_bulk (and the NDJSON import's),
 * search_p50_ms, two_hop_p50_ms and the server's peak RSS.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openConnection, openDatabase } from '../runtime/graph/kuzu/engine.js';
import { KUZU_GRAPH_DEFAULTS } from '../runtime/graph/kuzu/store.js';
import { compileService } from './compiled-service.js';
import { peakRssMb, printSummary, QUICK, serviceUrlOf, startChild, stop } from './lib.js';

const argument = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const NODES = Number(argument('--nodes') ?? (QUICK ? 10_000 : 100_000));
const RELS = NODES * 2;
/** records per request: the most the /graph upsert routes take */
const BATCH = 10_000;
/** requests in flight at once, as a loader with several workers sends them (the server's transaction takes them as they arrive) */
const CONCURRENCY = Number(argument('--concurrency') ?? 4);
const QUERIES = QUICK ? 20 : 50;
const WORDS = ['payments', 'checkout', 'ledger', 'search', 'billing', 'identity', 'gateway', 'catalog', 'orders', 'shipping', 'fraud', 'reports'];

const nodeOf = (i: number) => ({
  label: 'Service',
  properties: {
    _key: `svc-${i}`,
    name: `${WORDS[i % WORDS.length]} service ${i}`,
    description: `handles ${WORDS[(i * 7) % WORDS.length]} for team ${i % 97}`,
    tier: i % 3,
  },
});
/** relationship j: a fixed pseudo-random pair (two per node, no duplicates) */
const relOf = (j: number) => {
  const from = j % NODES;
  const to = (from + 1 + ((j * 7919) % (NODES - 1))) % NODES;
  return {
    type: 'DEPENDS_ON',
    from_label: 'Service',
    from_key: `svc-${from}`,
    to_label: 'Service',
    to_key: `svc-${to === from ? (to + 1) % NODES : to}`,
    properties: { weight: j % 10 },
  };
};

/** clock ticks a second, the unit of /proc/<pid>/stat's CPU times */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
/**
 * CPU seconds a process has used so far, every thread (the engine's too):
 * on a shared machine wall-clock time swings with the load, CPU time far less.
 */
function cpuSecondsOf(pid: number): number {
  // utime and stime are fields 14 and 15; the command name before them is in parentheses
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const ownCpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** runs `count` requests, CONCURRENCY at a time, in order of their index */
async function inFlight(count: number, send: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
}

async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed).slice(0, 300)}`);
  return parsed;
}

/** UTF-8 bytes of a prepared body */
const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

/** a POST of a prepared JSON body; throws unless the answer is 2xx */
async function post(url: string, token: string, path: string, body: Uint8Array<ArrayBuffer>): Promise<void> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text.slice(0, 300)}`);
}

/** the same rows as import bodies, as bytes (a loader streams a file): CSV (a nodes file and a relationships file) or one NDJSON body */
function importBodies(format: 'csv' | 'ndjson'): Uint8Array<ArrayBuffer>[] {
  if (format === 'ndjson') {
    const lines: string[] = [];
    for (let i = 0; i < NODES; i += 1) {
      const { label, properties } = nodeOf(i);
      lines.push(JSON.stringify({ label, ...properties }));
    }
    for (let j = 0; j < RELS; j += 1) {
      const rel = relOf(j);
      lines.push(JSON.stringify({ type: rel.type, _from: `Service:${rel.from_key}`, _to: `Service:${rel.to_key}`, weight: rel.properties.weight }));
    }
    return [utf8(lines.join('\n') + '\n')];
  }
  const nodes = ['label,_key,name,description,tier:int'];
  for (let i = 0; i < NODES; i += 1) {
    const { properties: p } = nodeOf(i);
    nodes.push(`Service,${p._key},${p.name},${p.description},${p.tier}`);
  }
  const rels = ['type,_from,_to,weight:int'];
  for (let j = 0; j < RELS; j += 1) {
    const rel = relOf(j);
    rels.push(`DEPENDS_ON,Service:${rel.from_key},Service:${rel.to_key},${rel.properties.weight}`);
  }
  return [utf8(nodes.join('\n') + '\n'), utf8(rels.join('\n') + '\n')];
}

/** POST /graph/import of the same rows into a fresh realm (bodies built before the clock starts); seconds */
async function importOverHttp(url: string, token: string, format: 'csv' | 'ndjson', serverCpu: () => number): Promise<{ seconds: number; cpuSeconds: number }> {
  const realm = `import-${format}`;
  await call(url, token, 'POST', '/realms', { name: realm });
  const bodies = importBodies(format);
  const cpuBefore = serverCpu();
  const started = performance.now();
  for (const body of bodies) {
    const response = await fetch(`${url}/graph/import?realm=${realm}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': format === 'csv' ? 'text/csv' : 'application/x-ndjson' },
      body,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`import ${format}: ${response.status} ${text.slice(0, 300)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = serverCpu() - cpuBefore;
  const stats = await call(url, token, 'GET', `/graph/stats?realm=${realm}`);
  if (stats['node_count'] !== NODES || stats['relationship_count'] !== RELS) throw new Error(`stats after ${format} import: ${JSON.stringify(stats)}`);
  return { seconds, cpuSeconds };
}

interface HttpFigures {
  readonly upsertSeconds: number;
  /** the server's CPU seconds over the upserts (and each import) */
  readonly upsertCpuSeconds: number;
  readonly searchMs: number[];
  readonly twoHopMs: number[];
  readonly importCsv: { seconds: number; cpuSeconds: number };
  readonly importNdjson: { seconds: number; cpuSeconds: number };
}

async function overHttp(url: string, serverCpu: () => number): Promise<HttpFigures> {
  const register = await fetch(`${url}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password 123', organization_name: 'Bench' }),
  });
  const token = String(((await register.json()) as Record<string, unknown>)['token']);
  // request bodies are built before the clock starts, as bytes: the client's JSON and UTF-8 encoding is not the server's upsert time
  const batches = (total: number, field: string, record: (index: number) => unknown): Uint8Array<ArrayBuffer>[] =>
    Array.from({ length: Math.ceil(total / BATCH) }, (_, batch) =>
      utf8(JSON.stringify({ [field]: Array.from({ length: Math.min(BATCH, total - batch * BATCH) }, (_, i) => record(batch * BATCH + i)) })),
    );
  const nodeBodies = batches(NODES, 'nodes', nodeOf);
  const relBodies = batches(RELS, 'relationships', relOf);
  const cpuBefore = serverCpu();
  const started = performance.now();
  await inFlight(nodeBodies.length, (batch) => post(url, token, '/graph/nodes', nodeBodies[batch]!));
  const nodesDone = performance.now();
  await inFlight(relBodies.length, (batch) => post(url, token, '/graph/relationships', relBodies[batch]!));
  const upsertSeconds = (performance.now() - started) / 1000;
  const upsertCpuSeconds = serverCpu() - cpuBefore;
  console.log(`  nodes ${((nodesDone - started) / 1000).toFixed(1)} s, relationships ${((performance.now() - nodesDone) / 1000).toFixed(1)} s`);
  const stats = await call(url, token, 'GET', '/graph/stats');
  if (stats['node_count'] !== NODES || stats['relationship_count'] !== RELS) throw new Error(`stats after upsert: ${JSON.stringify(stats)}`);

  // the first search builds the full-text index: timed apart from the steady state
  const indexStarted = performance.now();
  await call(url, token, 'GET', '/graph/search?query=payments&limit=20');
  console.log(`  first search (builds the full-text index): ${(performance.now() - indexStarted).toFixed(0)} ms`);
  const searchMs: number[] = [];
  for (let i = 0; i < QUERIES; i += 1) {
    const t0 = performance.now();
    const result = await call(url, token, 'GET', `/graph/search?query=${WORDS[i % WORDS.length]}&limit=20`);
    searchMs.push(performance.now() - t0);
    if ((result['items'] as unknown[]).length === 0) throw new Error('search found nothing');
  }
  const twoHopMs: number[] = [];
  for (let i = 0; i < QUERIES; i += 1) {
    const t0 = performance.now();
    await call(url, token, 'POST', '/graph/cypher', {
      query: 'MATCH (a:Service {_key: $key})-[:DEPENDS_ON]->(:Service)-[:DEPENDS_ON]->(c:Service) RETURN count(DISTINCT c) AS reach',
      params: { key: `svc-${(i * 7907) % NODES}` },
    });
    twoHopMs.push(performance.now() - t0);
  }
  const importCsv = await importOverHttp(url, token, 'csv', serverCpu);
  const importNdjson = await importOverHttp(url, token, 'ndjson', serverCpu);
  console.log(
    `  import: CSV ${importCsv.seconds.toFixed(2)} s (server CPU ${importCsv.cpuSeconds.toFixed(2)} s), NDJSON ${importNdjson.seconds.toFixed(2)} s (${importNdjson.cpuSeconds.toFixed(2)} s)`,
  );
  return { upsertSeconds, upsertCpuSeconds, searchMs, twoHopMs, importCsv, importNdjson };
}

/** the rows as CSV files: nodes, then relationships, `chunk` rows a file (quoted only where needed: the engine reads quoted cells at about half the speed, and the baselines are its best) */
function writeCsvFiles(dir: string, chunk: number): { nodes: string[]; relationships: string[] } {
  const cell = (value: unknown) => (typeof value === 'string' && /[",\n\r]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : String(value));
  const files = (total: number, name: string, line: (index: number) => unknown[]): string[] =>
    Array.from({ length: Math.ceil(total / chunk) }, (_, part) => {
      const file = join(dir, `${name}-${part}.csv`);
      const lines = Array.from({ length: Math.min(chunk, total - part * chunk) }, (_, i) =>
        line(part * chunk + i)
          .map(cell)
          .join(','),
      );
      writeFileSync(file, lines.join('\n') + '\n');
      return file;
    });
  return {
    nodes: files(NODES, 'nodes', (i) => {
      const { properties: p } = nodeOf(i);
      return [p._key, p.name, p.description, p.tier];
    }),
    relationships: files(RELS, 'rels', (j) => {
      const rel = relOf(j);
      return [rel.from_key, rel.to_key, rel.properties.weight];
    }),
  };
}

/**
 * The same rows COPY'd from CSV straight into a fresh database opened with
 * the server's settings: in one COPY per table (`chunk` = all rows: the
 * engine's bulk load), or in COPYs of `chunk` rows, one transaction each (the
 * engine alone under the API's one-transaction-per-request contract).
 * Seconds of COPY and COMMIT only, and of writing the CSV files; the stored
 * counts are checked.
 */
async function engineLoad(dir: string, name: string, chunk: number): Promise<{ copySeconds: number; copyCpuSeconds: number; csvSeconds: number }> {
  const csvStarted = performance.now();
  const files = writeCsvFiles(mkdtempSync(join(dir, `${name}-csv-`)), chunk);
  const csvSeconds = (performance.now() - csvStarted) / 1000;
  const database = await openDatabase(join(dir, `${name}.kuzu`), KUZU_GRAPH_DEFAULTS);
  const connection = await openConnection(database);
  const query = async (statement: string): Promise<Record<string, unknown>[]> => {
    const result = await connection.query(statement);
    const single = Array.isArray(result) ? result[0]! : result;
    const rows = (await single.getAll()) as Record<string, unknown>[];
    single.close();
    return rows;
  };
  try {
    await query('CREATE NODE TABLE Service(_key STRING PRIMARY KEY, name STRING, description STRING, tier INT64)');
    await query('CREATE REL TABLE DEPENDS_ON(FROM Service TO Service, weight INT64)');
    const cpuBefore = ownCpuSeconds();
    const started = performance.now();
    for (const [table, list] of [
      ['Service', files.nodes],
      ['DEPENDS_ON', files.relationships],
    ] as const) {
      for (const file of list) {
        if (list.length > 1) await query('BEGIN TRANSACTION');
        await query(`COPY ${table} FROM '${file}' (header=false)`);
        if (list.length > 1) await query('COMMIT');
      }
    }
    const copySeconds = (performance.now() - started) / 1000;
    const copyCpuSeconds = ownCpuSeconds() - cpuBefore;
    const [nodes] = await query('MATCH (n:Service) RETURN count(n) AS c');
    const [relationships] = await query('MATCH ()-[r:DEPENDS_ON]->() RETURN count(r) AS c');
    const stored = { nodes: Number(nodes?.['c']), relationships: Number(relationships?.['c']) };
    if (stored.nodes !== NODES || stored.relationships !== RELS)
      throw new Error(`${name} load stored ${stored.nodes} nodes, ${stored.relationships} relationships`);
    return { copySeconds, copyCpuSeconds, csvSeconds };
  } finally {
    await connection.close();
    await database.close();
  }
}

async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-graph-'));
  try {
    console.log(`data: ${NODES} nodes, ${RELS} relationships, requests of ${BATCH}, ${CONCURRENCY} in flight; ${QUERIES} searches and 2-hop queries`);
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );
    // the service as `npm start` runs it: plain JavaScript, no tsx loader compiling modules as they are first imported
    const server = await startChild(
      [compileService()],
      {
        DATA_DIR: join(dir, 'data'),
        PORT: '0',
        LOG_LEVEL: 'info',
        JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
      },
      serviceUrlOf({ echoWarnings: true }),
    );
    let http: Awaited<ReturnType<typeof overHttp>>;
    let rssMb: number;
    try {
      const pid = server.child.pid as number;
      http = await overHttp(server.value, () => cpuSecondsOf(pid));
      rssMb = peakRssMb(server.child.pid as number);
    } finally {
      await stop(server.child);
    }
    const rows = NODES + RELS;
    const upsertRowsPerS = rows / http.upsertSeconds;
    console.log(`HTTP upsert: ${Math.round(upsertRowsPerS)} rows/s (${http.upsertSeconds.toFixed(1)} s), server peak RSS ${rssMb} MB`);
    const bulk = await engineLoad(dir, 'bulk', Math.max(NODES, RELS));
    const bulkRowsPerS = rows / bulk.copySeconds;
    console.log(
      `Kùzu COPY from CSV: ${Math.round(bulkRowsPerS)} rows/s (${bulk.copySeconds.toFixed(2)} s; writing the CSV files took ${bulk.csvSeconds.toFixed(2)} s more)`,
    );
    const incremental = await engineLoad(dir, 'incremental', BATCH);
    const incrementalRowsPerS = rows / incremental.copySeconds;
    console.log(`Kùzu COPY from CSV in ${BATCH}-row transactions: ${Math.round(incrementalRowsPerS)} rows/s (${incremental.copySeconds.toFixed(2)} s)`);
    const ratio = Number((upsertRowsPerS / bulkRowsPerS).toFixed(3));
    const ratioIncremental = Number((upsertRowsPerS / incrementalRowsPerS).toFixed(3));
    console.log(`ratio vs bulk: ${ratio} (target >= 0.5); vs the engine in ${BATCH}-row transactions: ${ratioIncremental}`);
    // CPU seconds for the same rows: the server's (every thread, the engine's included) against the engine alone's
    const cpu = (seconds: number) => Number(seconds.toFixed(3));
    console.log(
      `CPU seconds: upsert server ${cpu(http.upsertCpuSeconds)} vs Kùzu in ${BATCH}-row transactions ${cpu(incremental.copyCpuSeconds)}; ` +
        `import server CSV ${cpu(http.importCsv.cpuSeconds)}, NDJSON ${cpu(http.importNdjson.cpuSeconds)} vs bulk COPY ${cpu(bulk.copyCpuSeconds)}`,
    );
    console.log(
      `search p50 ${percentile(http.searchMs, 50).toFixed(1)} ms, p99 ${percentile(http.searchMs, 99).toFixed(1)} ms; ` +
        `2-hop Cypher p50 ${percentile(http.twoHopMs, 50).toFixed(1)} ms, p99 ${percentile(http.twoHopMs, 99).toFixed(1)} ms`,
    );
    const importRowsPerS = rows / http.importCsv.seconds;
    const importNdjsonRowsPerS = rows / http.importNdjson.seconds;
    const ratioImport = Number((importRowsPerS / bulkRowsPerS).toFixed(3));
    console.log(
      `POST /graph/import: CSV ${Math.round(importRowsPerS)} rows/s, NDJSON ${Math.round(importNdjsonRowsPerS)} rows/s; ratio vs Kùzu's bulk COPY: ${ratioImport} (target >= 0.7), NDJSON ${(importNdjsonRowsPerS / bulkRowsPerS).toFixed(3)}`,
    );
    printSummary({
      bench: 'graph',
      nodes: NODES,
      relationships: RELS,
      upsert_rows_per_s: Math.round(upsertRowsPerS),
      bulk_rows_per_s: Math.round(bulkRowsPerS),
      bulk_csv_write_s: Number(bulk.csvSeconds.toFixed(2)),
      ratio_vs_bulk: ratio,
      incremental_rows_per_s: Math.round(incrementalRowsPerS),
      ratio_vs_incremental: ratioIncremental,
      import_rows_per_s: Math.round(importRowsPerS),
      ratio_import_vs_bulk: ratioImport,
      import_ndjson_rows_per_s: Math.round(importNdjsonRowsPerS),
      ratio_import_ndjson_vs_bulk: Number((importNdjsonRowsPerS / bulkRowsPerS).toFixed(3)),
      search_p50_ms: Number(percentile(http.searchMs, 50).toFixed(1)),
      two_hop_p50_ms: Number(percentile(http.twoHopMs, 50).toFixed(1)),
      peak_rss_mb: rssMb,
      upsert_cpu_s: cpu(http.upsertCpuSeconds),
      incremental_cpu_s: cpu(incremental.copyCpuSeconds),
      import_cpu_s: cpu(http.importCsv.cpuSeconds),
      import_ndjson_cpu_s: cpu(http.importNdjson.cpuSeconds),
      bulk_cpu_s: cpu(bulk.copyCpuSeconds),
      batch: BATCH,
      concurrency: CONCURRENCY,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

run().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
