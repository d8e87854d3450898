/**
 * Preloaded into the ingest bench's server with `--memory-profile`
 * (compiled to `dist/bench/memory-probe.js`, run with `node --import`): samples the process's memory every
 * 100 ms and writes the sample at peak RSS (V8 heap, external / ArrayBuffers,
 * anonymous RSS; the rest is native: DuckDB, Kùzu, libraries) to
 * MEM_PROBE_OUT when the process exits.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const out = process.env['MEM_PROBE_OUT'];
const mb = (bytes: number): number => Math.round(bytes / 1048576);
let peak: Record<string, number> | null = null;
const timer = setInterval(() => {
  const usage = process.memoryUsage();
  const anonKb = /RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  const sample = {
    rss_mb: mb(usage.rss),
    heap_total_mb: mb(usage.heapTotal),
    heap_used_mb: mb(usage.heapUsed),
    external_mb: mb(usage.external),
    array_buffers_mb: mb(usage.arrayBuffers),
    anon_rss_mb: Math.round(Number(anonKb) / 1024),
  };
  if (peak === null || sample.rss_mb > (peak['rss_mb'] ?? 0)) peak = sample;
}, 100);
timer.unref();
process.on('exit', () => {
  if (out) writeFileSync(out, JSON.stringify(peak));
});
