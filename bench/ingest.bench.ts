/**
 * Ingest benchmark: a realistic NDJSON data set (bench/ingest-dataset.ts)
 * posted over loopback HTTP to the compiled server (a child process) in
 * requests of up to 8 MB (`--request-bytes 0`: 5,000 rows) with concurrency 4, then the same file loaded in-process by DuckDB's
 * own `read_json` (newline-delimited, full-file schema detection, into a
 * database file like ours) in the same run.
 *
 *   npm run bench:ingest [-- --quick] [-- --rows N] [-- --request-bytes N] [-- --memory-profile]
 *
 * Last line: one JSON object with rows_per_s, mb_per_s, ratio_vs_duckdb_read_json,
 * p50/p99 request latency and the server's peak RSS.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileService } from './compiled-service.js';
import { writeDataset } from './ingest-dataset.js';
import { peakRssMb, printSummary, QUICK, ROOT, serviceUrlOf, startChild, stop } from './lib.js';

const argument = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const ROWS = Number(argument('--rows') ?? (QUICK ? 100_000 : 1_000_000));
const BATCH = 5_000;
/** `--memory-profile`: the server samples its own memory (bench/memory-probe.ts) and the sample at peak RSS is printed */
const PROFILE = process.argv.includes('--memory-profile');
/**
 * Requests of whole lines up to this many bytes (default 8,000,000: CONTEXT_INGEST_MAX_BYTES, ~24,700 rows);
 * `--request-bytes 0`: requests of BATCH lines
 */
const REQUEST_BYTES = Number(argument('--request-bytes') ?? 8_000_000);
const CONCURRENCY = 4;

/** Resident set size of a process now. */
function currentRssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds of a process's main thread (JavaScript: HTTP, the body scan, the event loop) and of all its
 * other threads together (DuckDB's query and worker threads, libuv's pool writing spill files, V8's GC helpers).
 */
function cpuByThread(pid: number): { main: number; others: number } {
  const split = { main: 0, others: 0 };
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      split[Number(task) === pid ? 'main' : 'others'] += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // the thread ended meanwhile (its time is lost from the split)
    }
  }
  return split;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);

/**
 * Requests as raw bytes of the file, read lazily so the whole file is never
 * in memory; no decoding, so the load generator takes little of the 2 cores.
 * Each request holds BATCH lines, or with `--request-bytes` as many whole
 * lines as fit in that many bytes.
 */
async function* batches(file: string): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r');
  try {
    let pending = Buffer.alloc(0);
    let lines = 0;
    let scanned = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(4 * 1024 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      pending = pending.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
      for (;;) {
        const newline = pending.indexOf(0x0a, scanned);
        if (newline === -1) break;
        if (REQUEST_BYTES > 0 && newline + 1 > REQUEST_BYTES && scanned > 0) {
          yield pending.subarray(0, scanned);
          pending = pending.subarray(scanned);
          scanned = 0;
          lines = 0;
          continue;
        }
        scanned = newline + 1;
        lines += 1;
        if (REQUEST_BYTES === 0 && lines === BATCH) {
          yield pending.subarray(0, scanned);
          pending = pending.subarray(scanned);
          scanned = 0;
          lines = 0;
        }
      }
    }
    if (pending.length > 0) yield pending;
  } finally {
    await handle.close();
  }
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function postOverHttp(url: string, file: string): Promise<{ seconds: number; latencies: number[]; rows: number }> {
  const register = await json(
    await fetch(`${url}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.test', password: 'bench password 123', organization_name: 'Bench' }),
    }),
  );
  const auth = { 'content-type': 'application/json', authorization: `Bearer ${String(register['token'])}` };
  const pipeline = await json(
    await fetch(`${url}/context/pipelines`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'bench', kind: 'webhook', target_table: 'context_events' }),
    }),
  );
  const token = await json(await fetch(`${url}/context/pipelines/${String(pipeline['id'])}/tokens`, { method: 'POST', headers: auth, body: '{}' }));
  const ingestUrl = `${url}/context/ingest/webhook/${String(token['token'])}`;

  const source = batches(file);
  const latencies: number[] = [];
  let rows = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      const started = performance.now();
      const result = await json(
        await fetch(ingestUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson' },
          body: new Uint8Array(next.value.buffer as ArrayBuffer, next.value.byteOffset, next.value.byteLength),
        }),
      );
      latencies.push(performance.now() - started);
      rows += Number(result['rows_out']);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;

  const tables = await json(await fetch(`${url}/context/tables?realm=default`, { headers: auth }));
  const table = (tables['items'] as { name: string; row_count: number; columns: unknown[] }[]).find((item) => item.name === 'context_events');
  if (table?.row_count !== ROWS) throw new Error(`expected ${ROWS} rows in context_events, found ${table?.row_count}`);
  console.log(`  context_events: ${table.row_count} rows, ${table.columns.length} columns`);
  return { seconds, latencies: latencies.sort((a, b) => a - b), rows };
}

/** DuckDB's own NDJSON load of the same file, in this process, into a fresh database file. */
async function duckdbReadJson(file: string, dir: string, database: string): Promise<number> {
  const instance = await DuckDBInstance.create(database === ':memory:' ? ':memory:' : join(dir, database));
  const connection = await instance.connect();
  const started = performance.now();
  const cpu = process.cpuUsage();
  // sample_size = -1: the data set gains properties late, so DuckDB must look at every line to load it
  await connection.run(`CREATE TABLE events AS SELECT * FROM read_json('${file}', format = 'newline_delimited', sample_size = -1)`);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  console.log(`  DuckDB read_json (${database}): ${((used.user + used.system) / 1e6).toFixed(1)} CPU-seconds over ${seconds.toFixed(1)} s`);
  const count = Number((await connection.runAndReadAll('SELECT count(*) FROM events')).getRowsJS()[0]?.[0]);
  if (count !== ROWS) throw new Error(`DuckDB loaded ${count} rows, expected ${ROWS}`);
  connection.closeSync();
  instance.closeSync();
  return ROWS / seconds;
}

async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  try {
    const file = join(dir, 'events.ndjson');
    const bytes = await writeDataset(file, ROWS);
    const mb = bytes / 1e6;
    console.log(
      `data set: ${ROWS} rows, ${mb.toFixed(1)} MB (${(bytes / ROWS).toFixed(0)} B/row), requests of ${REQUEST_BYTES > 0 ? `up to ${REQUEST_BYTES} bytes` : `${BATCH} rows`}, concurrency ${CONCURRENCY}`,
    );
    // other work on the machine moves every figure: say how busy it was
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );

    // the compiled service, as `npm start` runs it (bench/compiled-service.ts: tsx's loader costs ~120 MB of RSS)
    const entry = compileService();
    const server = await startChild(
      [...(PROFILE ? ['--import', join(ROOT, 'dist', 'bench', 'memory-probe.js')] : []), entry],
      {
        DATA_DIR: join(dir, 'data'),
        PORT: '0',
        LOG_LEVEL: 'info',
        JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
        ...(PROFILE ? { MEM_PROBE_OUT: join(dir, 'memory-peak.json') } : {}),
      },
      serviceUrlOf({ echoWarnings: true }),
    );
    let http: Awaited<ReturnType<typeof postOverHttp>>;
    let rssMb: number;
    let idleRssMb = NaN;
    try {
      idleRssMb = currentRssMb(server.child.pid as number);
      const cpuBefore = cpuSeconds(server.child.pid as number);
      const threadsBefore = cpuByThread(server.child.pid as number);
      http = await postOverHttp(server.value, file);
      rssMb = peakRssMb(server.child.pid as number);
      console.log(`  server CPU during the HTTP phase: ${(cpuSeconds(server.child.pid as number) - cpuBefore).toFixed(1)} s over ${http.seconds.toFixed(1)} s`);
      const threads = cpuByThread(server.child.pid as number);
      console.log(
        `  of which main thread (JavaScript) ${(threads.main - threadsBefore.main).toFixed(1)} s, other threads (DuckDB, libuv, GC) ${(threads.others - threadsBefore.others).toFixed(1)} s`,
      );
    } finally {
      await stop(server.child);
    }
    if (PROFILE) console.log(`  server memory at peak RSS: ${readFileSync(join(dir, 'memory-peak.json'), 'utf8')}`);
    const dbBytes = statSync(join(dir, 'data', 'context.duckdb')).size;
    const rowsPerS = ROWS / http.seconds;
    console.log(
      `HTTP ingest:            ${Math.round(rowsPerS)} rows/s, ${(mb / http.seconds).toFixed(1)} MB/s, ` +
        `p50 ${percentile(http.latencies, 50).toFixed(0)} ms, p99 ${percentile(http.latencies, 99).toFixed(0)} ms, ` +
        `server peak RSS ${rssMb} MB (${idleRssMb} MB idle), database ${(dbBytes / 1e6).toFixed(0)} MB`,
    );

    const baseline = await duckdbReadJson(file, dir, 'baseline.duckdb');
    console.log(`DuckDB read_json (file): ${Math.round(baseline)} rows/s, ${((baseline * bytes) / ROWS / 1e6).toFixed(1)} MB/s`);
    const inMemory = await duckdbReadJson(file, dir, ':memory:');
    console.log(`DuckDB read_json (memory): ${Math.round(inMemory)} rows/s`);
    const ratio = Number((rowsPerS / baseline).toFixed(2));
    console.log(`ratio vs DuckDB read_json into a file: ${ratio} (target >= 1.0); vs in memory: ${(rowsPerS / inMemory).toFixed(2)}; peak RSS target < 512 MB`);
    printSummary({
      bench: 'ingest',
      rows: ROWS,
      rows_per_s: Math.round(rowsPerS),
      mb_per_s: Number((mb / http.seconds).toFixed(1)),
      ratio_vs_duckdb_read_json: ratio,
      ratio_vs_duckdb_read_json_in_memory: Number((rowsPerS / inMemory).toFixed(2)),
      duckdb_read_json_rows_per_s: Math.round(baseline),
      p50_ms: Number(percentile(http.latencies, 50).toFixed(1)),
      p99_ms: Number(percentile(http.latencies, 99).toFixed(1)),
      peak_rss_mb: rssMb,
      idle_rss_mb: idleRssMb,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

run().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
