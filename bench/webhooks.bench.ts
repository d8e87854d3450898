/**
 * Inbound webhook intake: signed 10 KB JSON deliveries to `POST /hooks/:trigger_id`
 * against `GET /health` of the same server, in the same run, loaded over
 * loopback from this process (the server is a child process).
 *
 *   npm run bench:webhooks [-- --quick]
 *
 * What a delivery costs here: the trigger lookup, the rate check, the HMAC of
 * the raw 10 KB, the JSON parse, the stored delivery (headers + raw body), a
 * stored task run and the fire handed to the task's actor. The runs are kept
 * off the intake path on purpose: the organization's model endpoint is a
 * local server that never answers, so the task's one run slot stays busy, 100
 * fires wait as pending and every later fire is refused at the pending bound
 * and recorded as a failed run (`queue_full`); the delivery itself is still
 * stored and answered 202. After the load, the stored deliveries are counted
 * and must equal the 202s.
 */
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHmac } from '../runtime/crypto.js';
import { printSummary, QUICK, serviceUrlOf, startChild, stop } from './lib.js';

const rounds = QUICK ? 2 : 4;
const seconds = QUICK ? 5 : 10;
/** deliveries per round (a fixed count: see `drive`) */
const amount = QUICK ? 1500 : 6000;
const warmup = QUICK ? 2 : 4;
const connections = 32;
const BODY_BYTES = 10 * 1024;

interface Round {
  readonly rps: number;
  readonly p99_ms: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
}

/**
 * `amount`: a fixed number of requests, all answered before the load ends, so
 * the 2xx count is exact (a duration cut would leave requests in flight that
 * the server stores but the generator never counts).
 */
async function drive(
  url: string,
  options: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string>; seconds?: number; amount?: number },
): Promise<Round> {
  const result = await autocannon({
    url,
    connections,
    ...(options.amount === undefined ? { duration: options.seconds ?? 1 } : { amount: options.amount }),
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return { rps: Math.round(result.requests.average), p99_ms: result.latency.p99, ok: result['2xx'], non2xx: result.non2xx, errors: result.errors };
}

/** A 10 KB build-failure payload, the size of a real CI notification with its log excerpt. */
function payload(): string {
  const base = { build: { status: 'FAILURE', branch: 'main', commit: 'a1b2c3d4', url: 'http://ci.example.test/job/web/42/' }, log: '' };
  const filler = BODY_BYTES - JSON.stringify(base).length;
  return JSON.stringify({ ...base, log: 'x'.repeat(filler) });
}

async function run(): Promise<void> {
  // the model endpoint: accepts and never answers (runs stay in flight, off the intake path)
  const silentLlm = createServer(() => undefined);
  await new Promise<void>((resolve) => silentLlm.listen(0, '127.0.0.1', resolve));
  const llmPort = (silentLlm.address() as AddressInfo).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const server = await startChild(
    ['--import', 'tsx', 'main.ts'],
    { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', JWT_SECRET: 'bench-secret-0123456789abcdef0123456789', LLM_API_KEY: 'bench-key', SHUTDOWN_GRACE_SECS: '1' },
    serviceUrlOf(),
  ).catch(async (error: unknown) => {
    silentLlm.close();
    throw error;
  });
  const api = server.value;
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
    const { token } = await call('POST', '/auth/register', null, { email: 'bench@example.test', password: 'bench password 123', organization_name: 'Bench' });
    await call('PATCH', '/settings', token, { llm_provider: 'openai', llm_model: 'gpt-4o-mini', llm_base_url: `http://127.0.0.1:${llmPort}/v1` });
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

    let accepted = 0;
    const deliveries = (load: Round): Round => {
      accepted += load.ok;
      return load;
    };
    await drive(healthUrl, { seconds: warmup });
    deliveries(await drive(hookUrl, { method: 'POST', body, headers: hookHeaders, amount: Math.round(amount / 4) }));
    const healthRounds: Round[] = [];
    const hookRounds: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      healthRounds.push(await drive(healthUrl, { seconds }));
      hookRounds.push(deliveries(await drive(hookUrl, { method: 'POST', body, headers: hookHeaders, amount })));
    }
    const median = (list: Round[]): Round => [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)] as Round;
    const health = median(healthRounds);
    const hooks = median(hookRounds);
    const stored = (await call('GET', `/tasks/${task.id}/deliveries?limit=1`, token)).total as number;
    const runs = await call('GET', `/tasks/${task.id}`, token);
    const ratio = Number((hooks.rps / health.rps).toFixed(2));
    console.log(`rounds (req/s): health ${healthRounds.map((r) => r.rps).join(', ')}; deliveries ${hookRounds.map((r) => r.rps).join(', ')}`);
    console.log(`GET /health                  ${health.rps} req/s  p99 ${health.p99_ms} ms`);
    console.log(`POST /hooks/:id (10 KB, HMAC) ${hooks.rps} deliveries/s  p99 ${hooks.p99_ms} ms  non-2xx ${hooks.non2xx}  errors ${hooks.errors}`);
    console.log(`accepted (202) ${accepted}, stored ${stored}: ${stored === accepted ? 'every accepted delivery stored' : 'MISMATCH'}; task queue ${JSON.stringify(runs.runtime)}`);
    console.log(`ratio vs health: ${ratio} (target >= 0.5)`);
    printSummary({
      bench: 'webhooks',
      deliveries_per_s: hooks.rps,
      p99_ms: hooks.p99_ms,
      health_rps: health.rps,
      health_p99_ms: health.p99_ms,
      ratio_vs_health: ratio,
      accepted,
      stored,
      all_stored: stored === accepted,
      non2xx: hooks.non2xx,
      errors: hooks.errors,
      body_bytes: Buffer.byteLength(body),
      health_seconds: seconds,
      deliveries_per_round: amount,
      rounds,
      connections,
      generator: 'autocannon',
    });
    if (stored !== accepted) process.exitCode = 1;
  } finally {
    await stop(server.child);
    silentLlm.closeAllConnections();
    silentLlm.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await run();
