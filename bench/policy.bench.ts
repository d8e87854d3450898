/**
 * `npm run bench:policy`: evaluation of a typical tool-gating policy (test/policy/tool-gating.rego:
 * allow/deny by tool effect, connector allow-list, glob on tool names, a time window, a CIDR check,
 * deny messages with sprintf), compiled once, then `allow` and `deny` evaluated per call with a fresh
 * input like the service's `{subject, resource, action}`; inputs rotate over allowed and denied cases.
 *
 * Fields: `p50_us` / `p99_us` per evaluation (allow + deny, one input conversion), `evals_per_s`
 * (single thread), `compile_ms`. Target: p50 under 50 µs. `--quick` runs under a minute.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile } from '../runtime/policy/index.js';
import { QUICK, ROOT, printSummary } from './lib.js';

const ITERATIONS = QUICK ? 20_000 : 200_000;
const WARMUP = QUICK ? 2_000 : 20_000;

const source = readFileSync(join(ROOT, 'test/policy/tool-gating.rego'), 'utf8');
const t0 = performance.now();
const bundle = compile([{ name: 'tool-gating.rego', source }]);
const compileMs = performance.now() - t0;

const inputs = [
  { tool: 'github.list_issues', tool_effect: 'read', connector: 'github', args: { repo: 'a/b' } },
  { tool: 'github.create_issue', tool_effect: 'write', connector: 'github', args: { title: 'x' } },
  { tool: 'slack.delete_message', tool_effect: 'destructive', connector: 'slack', args: { target_ip: '8.8.8.8' } },
  { tool: 'gmail.search', tool_effect: 'read', connector: 'gmail', args: { target_ip: '10.1.2.3' } },
].map((resource, i) => ({
  subject: { task: `task-${i}`, binding: { id: `b-${i}`, write_allowed: i % 2 === 1 }, user: `user-${i}` },
  resource,
  action: 'call',
}));
const noon = BigInt(Date.parse('2026-01-05T12:00:00Z')) * 1_000_000n;

let sink = 0;
const once = (i: number): void => {
  const input = inputs[i % inputs.length]!;
  const [allow, deny] = bundle.evalMany(['data.service.gate.allow', 'data.service.gate.deny'], { input, nowNs: noon });
  sink += (allow === true ? 1 : 0) + (deny === undefined ? 0 : 1);
};

for (let i = 0; i < WARMUP; i++) once(i);
const samples = new Float64Array(ITERATIONS);
const start = performance.now();
for (let i = 0; i < ITERATIONS; i++) {
  const s = performance.now();
  once(i);
  samples[i] = performance.now() - s;
}
const totalMs = performance.now() - start;
samples.sort();
const pct = (p: number): number => Number(((samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? 0) * 1000).toFixed(2));

console.log(`tool-gating policy: ${ITERATIONS} evaluations (allow + deny) in ${totalMs.toFixed(0)} ms, compile ${compileMs.toFixed(1)} ms (sink ${sink})`);
printSummary({ p50_us: pct(0.5), p99_us: pct(0.99), evals_per_s: Math.round(ITERATIONS / (totalMs / 1000)), compile_ms: Number(compileMs.toFixed(2)) });
