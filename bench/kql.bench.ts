/**
 * `npm run bench:kql [-- --quick]`: five KQL queries (filter, summarize by bin
 * over time, top-N, join, mv-expand) over events laid out as ingest writes
 * them (`at` TIMESTAMPTZ, `label`, `body`, `props` BLOB, Utf8 property
 * columns), each against hand-written DuckDB SQL for the same question, in the
 * same run and process. Ratio = SQL time / KQL time (>= 0.8 is the target).
 * The rows are generated inside DuckDB, not posted through the ingest route.
 *
 * The parser's one-time load (`warmKusto`, done at server start when KQL is in
 * use) is timed and printed first. Then per query, ROUNDS rounds, each round
 * running the three in turn (so load on a shared machine hits them alike):
 * the hand-written SQL; the KQL query as a new text (a `// round n` comment
 * appended: analysis and translation paid, the "cold" figure a query seen for
 * the first time costs); and the KQL query as already seen (translation
 * reused, the "warm" figure); both KQL timings include looking up the realm's
 * table list through the table catalog, as every request does (DuckDB is read
 * again only after ingest created a table or a column). Medians of each; `ratios` are SQL / warm KQL,
 * `cold_ratios` SQL / cold KQL, `cpu_ratios` the same as `ratios` in CPU time
 * (all of the process's threads; steadier when other work shares the machine).
 * The load average before and after is part of the figures.
 * Last line: one JSON object with the figures.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { loadavg } from 'node:os';
import { realmSources } from '../ingest/kql/context-sources.js';
import { warmKusto } from '../ingest/kql/kusto.js';
import { runKql } from '../ingest/kql/run.js';
import { qualified, schemaName, TableCatalog } from '../ingest/table-catalog.js';

const quick = process.argv.includes('--quick');
const ROWS = quick ? 200_000 : 1_000_000;
const ORG = 'bench_org';
const REALM = 'default';
const table = qualified(schemaName(ORG, REALM), 'context_events');

async function fill(connection: DuckDBConnection): Promise<void> {
  await connection.run(`CREATE SCHEMA ${JSON.stringify(schemaName(ORG, REALM))}`);
  await connection.run(
    `CREATE TABLE ${table} ("at" TIMESTAMPTZ NOT NULL, "label" VARCHAR, "body" VARCHAR, "props" BLOB, "service" VARCHAR, "status" VARCHAR, "tags" VARCHAR)`,
  );
  await connection.run(`INSERT INTO ${table} SELECT TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i * 3), ['deploy','error','request','audit'][1 + i % 4], 'event ' || i || ' from host' || (i % 97),
    NULL, 'svc' || (i % 50), CAST(200 + (i % 7) * 50 AS VARCHAR), '["t' || (i % 5) || '","t' || (i % 11) || '"]' FROM range(${ROWS}) t(i)`);
}

const QUERIES: { name: string; kql: string; sql: string }[] = [
  {
    name: 'filter',
    kql: `context_events | where label == "error" and body has "host7" | project at, service, body`,
    sql: `SELECT make_timestamp(epoch_us("at")) AS at, service, body FROM ${table} WHERE label = 'error' AND regexp_matches(body, '(^|[^[:alnum:]])host7([^[:alnum:]]|$)', 'i')`,
  },
  {
    name: 'summarize_bin',
    kql: `context_events | summarize n = count(), errors = countif(label == "error") by bin(at, 1h)`,
    sql: `SELECT time_bucket(INTERVAL 1 HOUR, make_timestamp(epoch_us("at"))) AS at, count(*) AS n, count(*) FILTER (WHERE label = 'error') AS errors FROM ${table} GROUP BY 1`,
  },
  {
    name: 'top_n',
    kql: `context_events | summarize n = count() by service | top 10 by n`,
    sql: `SELECT service, count(*) AS n FROM ${table} GROUP BY service ORDER BY n DESC LIMIT 10`,
  },
  {
    name: 'join',
    kql: `context_events | where label == "error" | join kind=inner (datatable(status:string, meaning:string)["200","ok","500","server error","250","odd"]) on status | summarize count() by meaning`,
    sql: `WITH m(status, meaning) AS (VALUES ('200','ok'),('500','server error'),('250','odd')) SELECT m.meaning, count(*) FROM ${table} e JOIN m ON e.status = m.status WHERE e.label = 'error' GROUP BY 1`,
  },
  {
    name: 'mv_expand',
    kql: `context_events | where label == "audit" | extend t = parse_json(tags) | mv-expand tag = t to typeof(string) | summarize count() by tag`,
    sql: `SELECT tag, count(*) FROM (SELECT unnest(CAST(json_extract(CAST(tags AS JSON), '$[*]') AS JSON[])) ->> '$' AS tag FROM ${table} WHERE label = 'audit') GROUP BY tag`,
  },
];

const ROUNDS = 7;
const OPTIONS = { limit: 1_000_000, timeoutMs: 120_000 };
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
/** Wall-clock and CPU milliseconds (this process, all of DuckDB's threads: steadier than wall-clock on a shared machine). */
const since = async (run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> => {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
};
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

const instance = await DuckDBInstance.create(':memory:', { memory_limit: '1GB' });
const connection = await instance.connect();
await fill(connection);
const loadBefore = load();
const catalog = new TableCatalog();
const sources = await realmSources(connection, ORG, REALM, catalog);
const warmMs = await warmKusto();
console.log(`parser load and warm-up (once per process, at start): ${warmMs.toFixed(0)} ms`);
const figures: Record<
  string,
  { kql_ms: number; kql_cold_ms: number; sql_ms: number; ratio: number; cold_ratio: number; kql_cpu_ms: number; sql_cpu_ms: number; cpu_ratio: number }
> = {};
for (const query of QUERIES) {
  await runKql(connection, query.kql, sources, OPTIONS); // a check the query runs, and its translation kept
  await connection.runAndReadAll(query.sql);
  const sql: { wall: number; cpu: number }[] = [];
  const cold: { wall: number; cpu: number }[] = [];
  const warm: { wall: number; cpu: number }[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    sql.push(await since(async () => (await connection.runAndReadAll(query.sql)).getRowsJS()));
    cold.push(await since(async () => runKql(connection, `${query.kql}\n// round ${round}`, await realmSources(connection, ORG, REALM, catalog), OPTIONS)));
    warm.push(await since(async () => runKql(connection, query.kql, await realmSources(connection, ORG, REALM, catalog), OPTIONS)));
  }
  const wall = (list: { wall: number }[]): number => median(list.map((item) => item.wall));
  const cpu = (list: { cpu: number }[]): number => median(list.map((item) => item.cpu));
  const [sqlMs, coldMs, kqlMs] = [wall(sql), wall(cold), wall(warm)];
  const [sqlCpu, kqlCpu] = [cpu(sql), cpu(warm)];
  figures[query.name] = {
    kql_ms: Math.round(kqlMs),
    kql_cold_ms: Math.round(coldMs),
    sql_ms: Math.round(sqlMs),
    ratio: Number((sqlMs / kqlMs).toFixed(2)),
    cold_ratio: Number((sqlMs / coldMs).toFixed(2)),
    kql_cpu_ms: Math.round(kqlCpu),
    sql_cpu_ms: Math.round(sqlCpu),
    cpu_ratio: Number((sqlCpu / kqlCpu).toFixed(2)),
  };
  console.log(
    `${query.name.padEnd(14)} sql ${sqlMs.toFixed(0)} ms; kql warm ${kqlMs.toFixed(0)} ms (ratio ${(sqlMs / kqlMs).toFixed(2)}), cold ${coldMs.toFixed(0)} ms (ratio ${(sqlMs / coldMs).toFixed(2)}); cpu sql ${sqlCpu.toFixed(0)} ms, kql warm ${kqlCpu.toFixed(0)} ms (ratio ${(sqlCpu / kqlCpu).toFixed(2)})`,
  );
}
connection.closeSync();
instance.closeSync();
console.log(
  JSON.stringify({
    rows: ROWS,
    quick,
    rounds: ROUNDS,
    load_average: { before: loadBefore, after: load() },
    parser_warm_ms: Math.round(warmMs),
    ratios: Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, f.ratio])),
    cold_ratios: Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, f.cold_ratio])),
    cpu_ratios: Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, f.cpu_ratio])),
    figures,
  }),
);
