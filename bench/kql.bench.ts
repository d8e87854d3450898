/**
 * `npm run bench:kql [-- --quick]`: five KQL queries (filter, summarize by bin
 * over time, top-N, join, mv-expand) over events laid out as ingest writes
 * them (`at` TIMESTAMPTZ, `label`, `body`, `props` BLOB, Utf8 property
 * columns), each against hand-written DuckDB SQL for the same question, in the
 * same run and process. Ratio = SQL time / KQL time (>= 0.8 is the target).
 * The rows are generated inside DuckDB, not posted through the ingest route.
 * Last line: one JSON object with the figures.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { realmSources } from '../ingest/kql/context-sources.js';
import { runKql } from '../ingest/kql/run.js';
import { qualified, schemaName } from '../ingest/table-catalog.js';

const quick = process.argv.includes('--quick');
const ROWS = quick ? 200_000 : 1_000_000;
const ORG = 'bench_org';
const REALM = 'default';
const table = qualified(schemaName(ORG, REALM), 'context_events');

async function load(connection: DuckDBConnection): Promise<void> {
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
    sql: `SELECT timezone('UTC', "at") AS at, service, body FROM ${table} WHERE label = 'error' AND regexp_matches(body, '(^|[^[:alnum:]])host7([^[:alnum:]]|$)', 'i')`,
  },
  {
    name: 'summarize_bin',
    kql: `context_events | summarize n = count(), errors = countif(label == "error") by bin(at, 1h)`,
    sql: `SELECT time_bucket(INTERVAL 1 HOUR, timezone('UTC', "at")) AS at, count(*) AS n, count(*) FILTER (WHERE label = 'error') AS errors FROM ${table} GROUP BY 1`,
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

async function timed(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < 3; round += 1) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[1] as number;
}

const instance = await DuckDBInstance.create(':memory:', { memory_limit: '1GB' });
const connection = await instance.connect();
await load(connection);
const sources = await realmSources(connection, ORG, REALM);
const figures: Record<string, { kql_ms: number; sql_ms: number; ratio: number }> = {};
for (const query of QUERIES) {
  await runKql(connection, query.kql, sources, { limit: 1_000_000, timeoutMs: 120_000 }); // parser warm-up, and a check the query runs
  const kqlMs = await timed(() => runKql(connection, query.kql, sources, { limit: 1_000_000, timeoutMs: 120_000 }));
  const sqlMs = await timed(async () => (await connection.runAndReadAll(query.sql)).getRowsJS());
  figures[query.name] = { kql_ms: Math.round(kqlMs), sql_ms: Math.round(sqlMs), ratio: Number((sqlMs / kqlMs).toFixed(2)) };
  console.log(`${query.name.padEnd(14)} kql ${kqlMs.toFixed(0)} ms, sql ${sqlMs.toFixed(0)} ms, ratio ${(sqlMs / kqlMs).toFixed(2)}`);
}
connection.closeSync();
instance.closeSync();
console.log(JSON.stringify({ rows: ROWS, quick, ratios: Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, f.ratio])), figures }));
