/**
 * HTTP edge benchmark: an authenticated `GET /api/v1/realms` (JWT) against a
 * bare node:http hello-world, both in their own process, loaded from this
 * process over loopback in the same run.
 *
 *   npm run bench:http [-- --quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENERATOR, load, median, PINNED, printSummary, QUICK, ROOT, serviceUrlOf, startChild, stop, type LoadResult } from './lib.js';

/** alternating rounds, median reported: a shared 2-core machine drifts during a run */
const rounds = QUICK ? 3 : 5;
const seconds = QUICK ? 4 : 10;
const warmup = QUICK ? 2 : 4;
const connections = 64;

async function run(): Promise<void> {
  // measure what `npm start` runs: the compiled server
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-http-'));
  const ours = await startChild(
    ['dist/main.js'],
    { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', JWT_SECRET: 'bench-secret-0123456789abcdef0123456789' },
    serviceUrlOf(),
    { pinToCore1: true },
  );
  const baseline = await startChild(['--import', 'tsx', 'bench/node-http-hello.ts'], {}, (line) => (line.startsWith('listening ') ? line.slice(10) : null), {
    pinToCore1: true,
  });
  try {
    const register = await fetch(`${ours.value}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.test', password: 'bench password 123', organization_name: 'Bench' }),
    });
    const { token } = (await register.json()) as { token: string };
    for (let i = 0; i < 20; i++) {
      await fetch(`${ours.value}/realms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: `realm-${i}`, display_name: `Realm ${i}` }),
      });
    }
    const oursUrl = `${ours.value}/realms`;
    const baselineUrl = `http://127.0.0.1:${baseline.value}/`;
    const headers = { authorization: `Bearer ${token}` };

    await load(oursUrl, { seconds: warmup, connections, headers });
    await load(baselineUrl, { seconds: warmup, connections });
    const baselineRounds: LoadResult[] = [];
    const oursRounds: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      baselineRounds.push(await load(baselineUrl, { seconds, connections }));
      oursRounds.push(await load(oursUrl, { seconds, connections, headers }));
    }
    const baselineResult = median(baselineRounds);
    const oursResult = median(oursRounds);
    console.log(`rounds (req/s): node:http ${baselineRounds.map((r) => r.rps).join(', ')}; ours ${oursRounds.map((r) => r.rps).join(', ')}`);

    const ratio = Number((oursResult.rps / baselineResult.rps).toFixed(2));
    console.log(`node:http hello-world      ${baselineResult.rps} req/s  p50 ${baselineResult.p50_ms} ms  p99 ${baselineResult.p99_ms} ms`);
    console.log(
      `GET /api/v1/realms (JWT)   ${oursResult.rps} req/s  p50 ${oursResult.p50_ms} ms  p99 ${oursResult.p99_ms} ms  (21 realms per page, non-2xx ${oursResult.non2xx})`,
    );
    console.log(`ratio vs node:http: ${ratio} (target >= 1.0); load generator: ${GENERATOR}`);
    printSummary({
      bench: 'http-edge',
      rps: oursResult.rps,
      baseline_rps: baselineResult.rps,
      ratio_vs_node_http: ratio,
      p50_ms: oursResult.p50_ms,
      p99_ms: oursResult.p99_ms,
      non2xx: oursResult.non2xx,
      errors: oursResult.errors,
      seconds,
      rounds,
      connections,
      generator: GENERATOR,
      pinned_cores: PINNED,
    });
  } finally {
    await stop(ours.child);
    await stop(baseline.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await run();
