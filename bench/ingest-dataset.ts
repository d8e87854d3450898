/**
 * The ingest benchmark's data set: realistic mixed events (CI builds, logs,
 * deploys, HTTP access, alerts), 8-15 top-level properties each, some nested
 * objects, and properties that only start to appear later in the stream.
 * Deterministic (seeded), written as NDJSON.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/** mulberry32: small, fast, seedable; quality is irrelevant here. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVICES = ['checkout', 'search', 'auth', 'billing', 'inventory', 'gateway', 'notifier', 'reports'];
const BRANCHES = ['main', 'release/2.4', 'feature/cart-v2', 'fix/login-timeout', 'renovate/deps'];
const AUTHORS = ['ana', 'bo', 'chen', 'dara', 'eli', 'fatima', 'goran', 'hiro'];
const LEVELS = ['debug', 'info', 'info', 'info', 'warn', 'error'];
const PATHS = ['/api/cart', '/api/search?q=shoes', '/login', '/api/orders/123', '/healthz', '/api/users/me'];
const REGIONS = ['eu-west-1', 'us-east-1', 'ap-south-1'];
const WORDS = 'timeout retry connection pool exhausted upstream latency cache miss deploy rollout pod restarted oom killed build cached test flaky'.split(' ');

/** Properties that appear only after this fraction of the stream: the schema grows while ingesting. */
const LATE_PROPERTIES: readonly { readonly after: number; readonly name: string; readonly value: (r: () => number) => unknown }[] = [
  { after: 0.2, name: 'region', value: (r) => REGIONS[Math.floor(r() * REGIONS.length)] },
  {
    after: 0.35,
    name: 'trace_id',
    value: (r) =>
      Math.floor(r() * 2 ** 52)
        .toString(16)
        .padStart(16, '0'),
  },
  { after: 0.5, name: 'tenant', value: (r) => `t-${Math.floor(r() * 500)}` },
  { after: 0.65, name: 'feature_flags', value: (r) => ({ new_checkout: r() < 0.5, dark_mode: r() < 0.3 }) },
  { after: 0.8, name: 'cost_usd', value: (r) => Math.round(r() * 10_000) / 100 },
];

const pick = <T>(r: () => number, values: readonly T[]): T => values[Math.floor(r() * values.length)] as T;
const sentence = (r: () => number, words: number): string => Array.from({ length: words }, () => pick(r, WORDS)).join(' ');

function event(r: () => number, index: number, progress: number, start: number): Record<string, unknown> {
  const at = new Date(start + index * 37).toISOString();
  const service = pick(r, SERVICES);
  const kind = r();
  let row: Record<string, unknown>;
  if (kind < 0.3) {
    row = {
      at,
      label: 'log',
      body: sentence(r, 8 + Math.floor(r() * 12)),
      level: pick(r, LEVELS),
      service,
      host: `${service}-${Math.floor(r() * 20)}`,
      pid: Math.floor(r() * 65_535),
      logger: `${service}.handler`,
      thread: `worker-${Math.floor(r() * 8)}`,
    };
  } else if (kind < 0.55) {
    row = {
      at,
      label: 'http_request',
      body: `${pick(r, ['GET', 'POST', 'PUT'])} ${pick(r, PATHS)}`,
      status: pick(r, [200, 200, 200, 201, 204, 301, 404, 500, 503]),
      duration_ms: Math.round(r() * 2000 * 10) / 10,
      service,
      client_ip: `10.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}`,
      user_agent: pick(r, ['curl/8.5.0', 'Mozilla/5.0 (X11; Linux x86_64)', 'okhttp/4.12']),
      bytes: Math.floor(r() * 100_000),
      route: pick(r, PATHS).split('?')[0],
    };
  } else if (kind < 0.75) {
    row = {
      at,
      label: 'ci_build',
      body: `build ${pick(r, ['passed', 'passed', 'failed', 'cancelled'])} on ${pick(r, BRANCHES)}`,
      pipeline: `${service}-ci`,
      build_number: Math.floor(index / 3),
      branch: pick(r, BRANCHES),
      commit: { sha: Math.floor(r() * 2 ** 52).toString(16), author: pick(r, AUTHORS), message: sentence(r, 6) },
      duration_s: Math.floor(r() * 900),
      result: pick(r, ['success', 'success', 'failure', 'aborted']),
      tests: { passed: Math.floor(r() * 3000), failed: Math.floor(r() * 5), skipped: Math.floor(r() * 40) },
    };
  } else if (kind < 0.9) {
    row = {
      at,
      label: 'deploy',
      body: `deployed ${service} to ${pick(r, ['production', 'staging', 'preview'])}`,
      service,
      environment: pick(r, ['production', 'staging', 'preview']),
      version: `2.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`,
      deployer: pick(r, AUTHORS),
      replicas: 1 + Math.floor(r() * 12),
      rollout: { strategy: 'canary', step: Math.floor(r() * 5), max_surge: '25%' },
      healthy: r() < 0.93,
    };
  } else {
    row = {
      at,
      label: 'alert',
      body: `${service}: ${sentence(r, 5)}`,
      severity: pick(r, ['page', 'ticket', 'info']),
      service,
      rule: `${service}_${pick(r, ['latency', 'errors', 'saturation'])}_high`,
      value: Math.round(r() * 1000) / 10,
      threshold: 50,
      labels: { team: pick(r, ['core', 'payments', 'platform']), oncall: pick(r, AUTHORS) },
      runbook_url: `https://runbooks.example.test/${service}`,
    };
  }
  for (const late of LATE_PROPERTIES) if (progress >= late.after && r() < 0.7) row[late.name] = late.value(r);
  return row;
}

/** NDJSON lines (without the newline) of a `count`-row data set. */
export function* datasetLines(count: number, seed = 42): Generator<string> {
  const r = prng(seed);
  const start = Date.UTC(2025, 0, 1);
  for (let index = 0; index < count; index++) yield JSON.stringify(event(r, index, index / count, start));
}

/** Writes the data set to `file`; returns its size in bytes. */
export async function writeDataset(file: string, count: number, seed = 42): Promise<number> {
  const out = createWriteStream(file);
  let bytes = 0;
  let batch: string[] = [];
  for (const line of datasetLines(count, seed)) {
    batch.push(line);
    if (batch.length === 1000) {
      const text = batch.join('\n') + '\n';
      bytes += Buffer.byteLength(text);
      if (!out.write(text)) await once(out, 'drain');
      batch = [];
    }
  }
  if (batch.length > 0) {
    const text = batch.join('\n') + '\n';
    bytes += Buffer.byteLength(text);
    out.write(text);
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}
