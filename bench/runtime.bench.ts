/**
 * `npm run bench:runtime`: the agent runtime's own costs, in process, with
 * the real supervisor, machine, catalog and SQLite transcript, and a model
 * that answers instantly (a harness, not a test double of our code).
 *
 * - actors_started_per_s: `startRun` calls per second (run record, transcript
 *   start, actor spawn and start), runs answered with one text turn
 * - parked_runs / peak_rss_mb: runs waiting on an approval at once, parked
 *   (AGENT_PARK_AFTER_MS 0 here: persisted, actor stopped), and the process's
 *   peak RSS from before the first start until all of them are parked
 *   (target: 100,000 under 500 MB; 10,000 with --quick)
 * - approval_to_resume_p50_ms / p99_ms: for a sample of parked runs answered
 *   one at a time, the time from `answer()` to the start of the run's next
 *   model turn (read back from the store, actor respawned, tool run)
 * - shutdown_of_parked_ms: a shutdown with every run parked (nothing to
 *   interrupt: they are persisted already)
 * - turn_overhead_p50_ms / p99_ms: per tool-call turn, the time from the end
 *   of one model turn to the start of the next minus the time inside the tool
 *   (target p50 under 1 ms): machine transitions, argument validation,
 *   approval gate, transcript recording. The SQLite writes of the transcript
 *   are deferred to the next event-loop turn (they run while the model
 *   answers), so they are not in this figure:
 * - amortized_ms_per_turn_incl_persistence: wall time of the whole overhead
 *   phase (run starts and every transcript write included) per model turn
 *
 * `--quick` runs fewer overhead turns and start iterations; the last line is
 * one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectorPlugin } from '../connectors/contract.js';
import { loadPlugins } from '../connectors/loader.js';
import { AgentRuntime } from '../runtime/agent/agent-runtime.js';
import { openCollections } from '../domains/collections.js';
import { loadConfig } from '../runtime/config.js';
import type { LlmEvent, LlmProvider, LlmRequest } from '../runtime/llm/types.js';
import { createLogger } from '../runtime/logger.js';
import { openMetadataStore } from '../runtime/store/open.js';
import { asOrgId } from '../runtime/store/types.js';
import { Supervisor } from '../runtime/supervisor.js';
import { QUICK } from './lib.js';

const PARKED = QUICK ? 10_000 : 100_000;
const RESUMED = QUICK ? 200 : 1_000;
const START_RUNS = QUICK ? 1_000 : 10_000;
const OVERHEAD_RUNS = QUICK ? 200 : 1_000;
const TOOL_TURNS_PER_RUN = 5;

let toolMs = 0;
/** Sourceless tools that do nothing, timed so their time can be taken out. */
const benchPlugin: ConnectorPlugin = {
  kind: 'bench',
  version: '1.0.0',
  contract: '^1',
  description: 'benchmark tools',
  sourceless: true,
  configSchema: { type: 'object' },
  validate: async () => ({ ok: true }),
  tools: [
    {
      name: 'noop',
      description: 'does nothing, quickly',
      effect: 'read',
      input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
      run: async (args) => {
        const started = performance.now();
        const result = { n: args['n'] };
        toolMs += performance.now() - started;
        return result;
      },
    },
    {
      name: 'write',
      description: 'a write that needs approval',
      effect: 'write',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      run: async (args) => ({ written: args['text'] }),
    },
  ],
};

const usage = { input_tokens: 100, output_tokens: 10 };

/** A model that answers at once: `toolTurns` tool-call turns, then text; marks when each turn starts and ends. */
function instantProvider(toolTurns: number, tool: 'bench.noop' | 'bench.write', marks?: { start: number[]; end: number[] }): LlmProvider {
  let turn = 0;
  return {
    name: 'bench',
    async *stream(_request: LlmRequest): AsyncIterable<LlmEvent> {
      marks?.start.push(performance.now());
      turn += 1;
      if (turn <= toolTurns) {
        const args = tool === 'bench.noop' ? { n: turn } : { text: 'x' };
        yield { type: 'tool_call', call: { id: `call_${turn}`, name: 'execute_connector_tool', arguments: { tool, arguments: args } } };
        marks?.end.push(performance.now());
        yield { type: 'done', finish_reason: 'tool_use', usage };
        return;
      }
      yield { type: 'text_delta', text: 'done' };
      marks?.end.push(performance.now());
      yield { type: 'done', finish_reason: 'end_turn', usage };
    },
  };
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'runtime-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'b'.repeat(32), LOG_LEVEL: 'silent' });
  const logger = createLogger(config);
  const store = await openMetadataStore(config);
  const collections = await openCollections(store);
  const supervisor = new Supervisor({ logger, shutdownGraceMs: 30_000 });
  const plugins = await loadPlugins({ builtins: [benchPlugin] });
  const runtime = new AgentRuntime({ supervisor, collections, plugins, logger, parkAfterMs: 0 });
  /** when each resumed run's next model turn started */
  const resumedAt = new Map<string, number>();
  runtime.registerResumer('bench', async (_org, run) => ({
    provider: {
      name: 'bench',
      async *stream(): AsyncIterable<LlmEvent> {
        resumedAt.set(run.id, performance.now());
        yield { type: 'text_delta', text: 'done' };
        yield { type: 'done', finish_reason: 'end_turn', usage };
      },
    },
  }));
  const org = asOrgId('org_bench');

  const base = {
    orgId: org,
    userId: 'usr_bench',
    kind: 'chat' as const,
    input: { content: 'bench' },
    messages: [{ role: 'user' as const, content: 'bench' }],
    model: 'gpt-4o-mini',
    approvalTimeoutMs: 3_600_000,
    maxTurns: 50,
    timeoutMs: 3_600_000,
    costCapUsd: null,
    spentTodayUsd: 0,
  };

  // 1. runs parked on an approval at once (first: the cleanest RSS figure)
  global.gc?.();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const baseRssMb = process.memoryUsage().rss / 1_048_576;
  const parkedIds: string[] = [];
  for (let i = 0; i < PARKED; i += 1) {
    const { runId } = await runtime.startRun({
      ...base,
      provider: instantProvider(1, 'bench.write'),
      approvalWrite: 'ask',
      resume: { site: 'bench', data: {} },
    });
    parkedIds.push(runId);
    // runs arrive as HTTP requests, each its own event-loop turn: let the queued transcript writes drain in between
    if (i % 50 === 49) await yieldToEventLoop();
    // and they arrive over time: let the sweep park the waiting ones (no more than 2,000 waiting live)
    while (runtime.liveRuns > 2_000) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  while (runtime.parkedRuns < PARKED) await new Promise((resolve) => setTimeout(resolve, 50));
  const parkedRuns = runtime.parkedRuns;
  const parkedRssMb = process.memoryUsage().rss / 1_048_576;
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  clearInterval(sampler);
  const heap = process.memoryUsage();

  // approval to resume, one parked run at a time
  const resumeSamples: number[] = [];
  for (const runId of parkedIds.slice(0, RESUMED)) {
    const approvalId = `apr_${runId.slice(runId.indexOf('_') + 1)}_1`;
    const asked = performance.now();
    const answer = await runtime.answer(org, approvalId, true, 'usr_bench');
    if (answer !== 'accepted') throw new Error(`approval ${approvalId}: ${answer}`);
    await supervisor.whenFinished(runId);
    const started = resumedAt.get(runId);
    if (started === undefined) throw new Error(`run ${runId} did not resume`);
    resumeSamples.push(started - asked);
  }
  await runtime.drain();
  resumeSamples.sort((a, b) => a - b);
  // shutdown with every run parked: nothing to interrupt
  const shutdownStarted = performance.now();
  await supervisor.shutdown();
  const shutdownMs = performance.now() - shutdownStarted;

  // a fresh runtime for the timing phases: a supervisor that shut down takes no new actors
  const timingSupervisor = new Supervisor({ logger });
  const timingRuntime = new AgentRuntime({ supervisor: timingSupervisor, collections, plugins, logger });

  // 2. turn overhead, one run at a time
  const samples: number[] = [];
  const phaseStarted = performance.now();
  let phaseToolMs = 0;
  for (let i = 0; i < OVERHEAD_RUNS; i += 1) {
    const marks = { start: [] as number[], end: [] as number[] };
    const tools: number[] = [];
    const provider = instantProvider(TOOL_TURNS_PER_RUN, 'bench.noop', marks);
    // tool time between turn k's end and turn k+1's start
    const wrapped: LlmProvider = {
      name: provider.name,
      stream: (request) => {
        tools.push(toolMs);
        return provider.stream(request);
      },
    };
    toolMs = 0;
    const { runId } = await timingRuntime.startRun({ ...base, provider: wrapped, approvalWrite: 'allow' });
    await timingSupervisor.whenFinished(runId);
    phaseToolMs += toolMs;
    for (let turn = 0; turn < TOOL_TURNS_PER_RUN; turn += 1) {
      const gap = (marks.start[turn + 1] ?? NaN) - (marks.end[turn] ?? NaN);
      const inTool = (tools[turn + 1] ?? 0) - (tools[turn] ?? 0);
      if (i >= 10) samples.push(gap - inTool); // the first runs warm the JIT
    }
  }
  await timingRuntime.drain();
  // everything, the deferred transcript writes and run starts included, per model turn
  const amortizedMs = (performance.now() - phaseStarted - phaseToolMs) / (OVERHEAD_RUNS * (TOOL_TURNS_PER_RUN + 1));
  samples.sort((a, b) => a - b);

  // 3. actors started per second
  const startedAt = performance.now();
  const started: string[] = [];
  for (let i = 0; i < START_RUNS; i += 1) {
    started.push((await timingRuntime.startRun({ ...base, provider: instantProvider(0, 'bench.noop'), approvalWrite: 'allow' })).runId);
    if (i % 50 === 49) await yieldToEventLoop();
  }
  const startSeconds = (performance.now() - startedAt) / 1000;
  await Promise.all(started.map((id) => timingSupervisor.whenFinished(id)));
  await timingRuntime.drain();

  await timingSupervisor.shutdown();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });

  const result = {
    bench: 'runtime',
    quick: QUICK,
    actors_started_per_s: Math.round(START_RUNS / startSeconds),
    parked_runs: parkedRuns,
    peak_rss_mb: Math.round(peakRss / 1_048_576),
    rss_before_parking_mb: Math.round(baseRssMb),
    rss_when_parked_mb: Math.round(parkedRssMb),
    heap_used_when_parked_mb: Math.round(heap.heapUsed / 1_048_576),
    approval_to_resume_p50_ms: Number(percentile(resumeSamples, 50).toFixed(3)),
    approval_to_resume_p99_ms: Number(percentile(resumeSamples, 99).toFixed(3)),
    resume_samples: resumeSamples.length,
    turn_overhead_p50_ms: Number(percentile(samples, 50).toFixed(3)),
    turn_overhead_p99_ms: Number(percentile(samples, 99).toFixed(3)),
    turn_samples: samples.length,
    amortized_ms_per_turn_incl_persistence: Number(amortizedMs.toFixed(3)),
    shutdown_of_parked_ms: Math.round(shutdownMs),
    targets_met: peakRss / 1_048_576 < 500 && percentile(samples, 50) < 1,
  };
  console.log(`turn overhead p50 ${result.turn_overhead_p50_ms} ms, p99 ${result.turn_overhead_p99_ms} ms over ${samples.length} tool-call turns`);
  console.log(`${result.amortized_ms_per_turn_incl_persistence} ms per model turn amortized, run start and SQLite transcript writes included`);
  console.log(`${result.actors_started_per_s} agent-run actors started per second`);
  console.log(`${parkedRuns} runs parked on approval, peak RSS ${result.peak_rss_mb} MB; shutdown took ${result.shutdown_of_parked_ms} ms`);
  console.log(`approval to resume p50 ${result.approval_to_resume_p50_ms} ms, p99 ${result.approval_to_resume_p99_ms} ms over ${resumeSamples.length} runs`);
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
