/**
 * Inbound webhook intake: signed 10 KB JSON deliveries to `POST /hooks/:trigger_id`
 * against `GET /health` of the same server, in the same run, loaded over
 * loopback from a second process (wrk when installed, else autocannon; the
 * server runs what `npm start` runs, pinned to its own core when taskset exists).
 *
 *   npm run bench:webhooks [-- --quick]
 *
 * What a delivery costs here: the trigger lookup, the rate check, the HMAC of
 * the raw 10 KB, the JSON parse, the stored delivery (headers + raw body), a
 * stored task run and the fire handed to the task's actor. `GET /health` is the
 * service's readiness probe: it pings the metadata store, DuckDB and the graph
 * folder on every call.
 *
 * The runs are kept off the intake path on purpose: the organization's model
 * endpoint is a local server that never answers, so the task's one run slot
 * stays busy, 100 fires wait as pending and every later fire is refused at the
 * pending bound and recorded as a failed run (`queue_full`); the delivery
 * itself is still stored and answered 202.
 *
 * "Every accepted delivery stored" is checked exactly: every 202 body the load
 * generator received is recorded, and after the server has stopped each of
 * those delivery ids is read back from its metadata store.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCollections } from '../domains/collections.js';
import { signHmac } from '../runtime/crypto.js';
import { SqliteMetadataStore } from '../runtime/store/sqlite.js';
import { asOrgId } from '../runtime/store/types.js';
import { GENERATOR, load, median, PINNED, printSummary, QUICK, ROOT, serviceUrlOf, startChild, stop, type LoadResult } from './lib.js';

/** alternating rounds, median reported: a shared 2-core machine drifts during a run */
const rounds = QUICK ? 3 : 5;
const seconds = QUICK ? 4 : 10;
const warmup = QUICK ? 2 : 4;
const connections = 32;
const BODY_BYTES = 10 * 1024;

/** A 10 KB build-failure payload, the size of a real CI notification with its log excerpt. */
function payload(): string {
  const base = { build: { status: 'FAILURE', branch: 'main', commit: 'a1b2c3d4', url: 'http://ci.example.test/job/web/42/' }, log: '' };
  const filler = BODY_BYTES - JSON.stringify(base).length;
  return JSON.stringify({ ...base, log: 'x'.repeat(filler) });
}

/** The delivery ids of the recorded 202 bodies. */
function acceptedIds(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => (JSON.parse(line) as { delivery_id: string }).delivery_id);
}

/** Reads every accepted delivery back from the stopped server's store: the ids missing or not stored as accepted. */
async function missingDeliveries(dataDir: string, orgId: string, ids: readonly string[]): Promise<string[]> {
  const store = new SqliteMetadataStore(join(dataDir, 'metadata.db'));
  try {
    const { inboundDeliveries } = await openCollections(store);
    const missing: string[] = [];
    for (const id of ids) {
      const delivery = await inboundDeliveries.get(asOrgId(orgId), id);
      if (delivery?.status !== 'accepted') missing.push(id);
    }
    return missing;
  } finally {
    await store.close();
  }
}

async function run(): Promise<void> {
  // measure what `npm start` runs: the compiled server
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  // the model endpoint: accepts and never answers (runs stay in flight, off the intake path)
  const silentLlm = createServer(() => undefined);
  await new Promise<void>((resolve) => silentLlm.listen(0, '127.0.0.1', resolve));
  const llmPort = (silentLlm.address() as AddressInfo).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const recordTo = join(dataDir, 'accepted.ndjson');
  const server = await startChild(
    ['dist/main.js'],
    {
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
      LLM_API_KEY: 'bench-key',
      LLM_BASE_URL: `http://127.0.0.1:${llmPort}/v1`,
      SHUTDOWN_GRACE_SECS: '1',
    },
    serviceUrlOf({ echoWarnings: true }),
    { pinToCore1: true },
  ).catch(async (error: unknown) => {
    silentLlm.close();
    throw error;
  });
  const api = server.value;
  let stopped = false;
  try {
    const call = async (method: string, path: string, token: string | null, body?: unknown): Promise<any> => {
      const response = await fetch(api + path, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? null : response.json();
    };
    const registered = await call('POST', '/auth/register', null, { email: 'bench@example.test', password: 'bench password 123', organization_name: 'Bench' });
    const token = registered.token as string;
    const orgId = (await call('GET', '/auth/me', token)).organization.id as string;
    // the operator's endpoint (LLM_BASE_URL) serves the organization: it names only provider and model
    await call('PATCH', '/settings', token, { llm_provider: 'openai', llm_model: 'gpt-4o-mini' });
    const task = await call('POST', '/tasks', token, {
      name: 'build failures',
      trigger: { kind: 'webhook' },
      input_template: { instruction: 'Build {{trigger.body.build.status}} on {{trigger.body.build.branch}}' },
      max_concurrent_runs: 1,
      webhook: { rate_limit_per_minute: 1_000_000 },
    });
    const body = payload();
    const hookUrl = task.trigger.url as string;
    const hookHeaders = { 'content-type': 'application/json', 'x-service-signature': signHmac(task.trigger.secret as string, Buffer.from(body)) };
    const healthUrl = `${api}/health`;
    const deliver = (roundSeconds: number): Promise<LoadResult> => load(hookUrl, { seconds: roundSeconds, connections, headers: hookHeaders, body, recordTo });

    await load(healthUrl, { seconds: warmup, connections });
    await deliver(warmup);
    const healthRounds: LoadResult[] = [];
    const hookRounds: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      healthRounds.push(await load(healthUrl, { seconds, connections }));
      hookRounds.push(await deliver(seconds));
    }
    const health = median(healthRounds);
    const hooks = median(hookRounds);
    const stored = (await call('GET', `/tasks/${task.id}/deliveries?limit=1`, token)).total as number;
    const queue = (await call('GET', `/tasks/${task.id}`, token)).runtime;
    await stop(server.child);
    stopped = true;

    const accepted = acceptedIds(recordTo);
    const missing = await missingDeliveries(dataDir, orgId, accepted);
    const ratio = Number((hooks.rps / health.rps).toFixed(2));
    console.log(
      `load: ${GENERATOR}${PINNED ? ' (pinned: server core 1, load core 0)' : ''}, ${connections} connections, ${rounds} rounds of ${seconds} s each`,
    );
    console.log(`rounds (req/s): health ${healthRounds.map((r) => r.rps).join(', ')}; deliveries ${hookRounds.map((r) => r.rps).join(', ')}`);
    console.log(`GET /health                  ${health.rps} req/s  p50 ${health.p50_ms} ms  p99 ${health.p99_ms} ms`);
    console.log(
      `POST /hooks/:id (10 KB, HMAC) ${hooks.rps} deliveries/s  p50 ${hooks.p50_ms} ms  p99 ${hooks.p99_ms} ms  non-2xx ${hooks.non2xx}  errors ${hooks.errors}`,
    );
    console.log(
      `accepted (202) ${accepted.length}, read back ${accepted.length - missing.length}` +
        `${missing.length === 0 ? ': every accepted delivery stored' : `: MISSING ${missing.slice(0, 5).join(', ')}`}` +
        ` (${stored} stored in all, requests cut at a round's end included); task queue ${JSON.stringify(queue)}`,
    );
    console.log(`ratio vs health: ${ratio} (target >= 0.5)`);
    printSummary({
      bench: 'webhooks',
      deliveries_per_s: hooks.rps,
      p50_ms: hooks.p50_ms,
      p99_ms: hooks.p99_ms,
      health_rps: health.rps,
      health_p99_ms: health.p99_ms,
      ratio_vs_health: ratio,
      accepted: accepted.length,
      missing: missing.length,
      all_stored: missing.length === 0 && accepted.length > 0,
      stored,
      non2xx: hooks.non2xx,
      errors: hooks.errors,
      body_bytes: Buffer.byteLength(body),
      seconds,
      rounds,
      connections,
      generator: GENERATOR,
      pinned: PINNED,
    });
    if (missing.length > 0 || accepted.length === 0) process.exitCode = 1;
  } finally {
    if (!stopped) await stop(server.child);
    silentLlm.closeAllConnections();
    silentLlm.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await run();
