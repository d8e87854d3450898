/** Shared bench plumbing: argument parsing, child servers, load generation, the final JSON line. */
import autocannon from 'autocannon';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const QUICK = process.argv.includes('--quick');

/**
 * On a 2-core machine the scheduler moving the server and the load generator
 * across cores swings results by 2x between rounds: when `taskset` exists,
 * HTTP-edge servers run on core 1 (`pinToCore1`) and wrk on core 0.
 */
const PIN = !spawnSync('taskset', ['-c', '0', 'true']).error && (Number(spawnSync('nproc').stdout?.toString().trim()) || 1) >= 2;
export const PINNED = PIN;
const pinned = (core: number, command: string, args: string[]): [string, string[]] =>
  PIN ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];

export interface LoadResult {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly errors: number;
  readonly non2xx: number;
}

export interface LoadOptions {
  readonly seconds: number;
  readonly connections: number;
  readonly headers?: Record<string, string>;
  /** a POST of this body on every request (default: GET) */
  readonly body?: string;
  /** appends the body of every 2xx response to this file, one per line (what the server acknowledged) */
  readonly recordTo?: string;
}

/** wrk (C, one thread) when installed: it needs far less CPU per request than a Node load generator. */
export const GENERATOR: 'wrk' | 'autocannon' = spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk';

const toMs = (value: string, unit: string): number => Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 1);

/** wrk's Lua hooks for a POST body and for recording 2xx bodies (files, so no value is quoted into Lua code) */
function wrkScript(options: LoadOptions): string | null {
  if (options.body === undefined && options.recordTo === undefined) return null;
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const lines: string[] = [];
  if (options.body !== undefined) {
    writeFileSync(join(dir, 'body'), options.body);
    lines.push(
      'wrk.method = "POST"',
      `local input = assert(io.open(${JSON.stringify(join(dir, 'body'))}, "rb"))`,
      'wrk.body = input:read("*a")',
      'input:close()',
    );
  }
  if (options.recordTo !== undefined) {
    lines.push(
      `local out = assert(io.open(${JSON.stringify(options.recordTo)}, "ab"))`,
      'response = function(status, headers, body)',
      '  if status >= 200 and status < 300 then out:write(body, "\\n") end',
      'end',
    );
  }
  const script = join(dir, 'load.lua');
  writeFileSync(script, lines.join('\n') + '\n');
  return script;
}

/** asynchronous, so this process's own timers and sockets (keep-alive pools) stay serviced during a round */
async function wrk(url: string, options: LoadOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  for (const [key, value] of Object.entries(options.headers ?? {})) args.push('-H', `${key}: ${value}`);
  const script = wrkScript(options);
  if (script !== null) args.push('-s', script);
  const [command, commandArgs] = pinned(0, 'wrk', [...args, url]);
  const { stdout: out } = await promisify(execFile)(command, commandArgs, { encoding: 'utf8' });
  const latency = (percentile: string): number => {
    const match = new RegExp(`\\s${percentile}%\\s+([\\d.]+)(us|ms|s|m)`).exec(out);
    return match ? Number(toMs(match[1] ?? '0', match[2] ?? 'ms').toFixed(3)) : NaN;
  };
  return {
    rps: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)),
    p50_ms: latency('50'),
    p99_ms: latency('99'),
    errors: Number(
      /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/
        .exec(out)
        ?.slice(1)
        .reduce((a, b) => a + Number(b), 0) ?? 0,
    ),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/** Drives `url` from outside the server process: wrk when installed, else autocannon. */
export async function load(url: string, options: LoadOptions): Promise<LoadResult> {
  if (GENERATOR === 'wrk') return wrk(url, options);
  const acknowledged: string[] = [];
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { method: 'POST' as const, body: options.body }),
    ...(options.recordTo === undefined
      ? {}
      : { requests: [{ onResponse: (status: number, body: string) => void (status >= 200 && status < 300 && acknowledged.push(body)) }] }),
  });
  if (options.recordTo !== undefined) appendFileSync(options.recordTo, acknowledged.map((body) => body + '\n').join(''));
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** The round with the median throughput. */
export function median(results: readonly LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.rps - b.rps);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error('no load results');
  return middle;
}

/** Starts a child process and resolves with the first stdout line matching `ready`. */
export function startChild(
  args: string[],
  env: Record<string, string>,
  ready: (line: string) => string | null,
  options: { readonly pinToCore1?: boolean } = {},
): Promise<{ child: ChildProcess; value: string }> {
  const [command, commandArgs] = options.pinToCore1 ? pinned(1, process.execPath, args) : [process.execPath, args];
  const child = spawn(command, commandArgs, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const value = ready(line);
      if (value !== null) resolve({ child, value });
    });
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The last line every bench prints: one JSON object with its figures. */
export function printSummary(summary: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(summary) + '\n');
}

/**
 * The `ready` reader for `startChild` of the service: the URL from its `listening` log line.
 * With `echoWarnings`, the service's warnings and errors are printed (they are part of the result).
 */
export function serviceUrlOf(options: { readonly echoWarnings?: boolean } = {}): (line: string) => string | null {
  return (line) => {
    try {
      const entry = JSON.parse(line) as { url?: string; msg?: string; level?: number };
      if (options.echoWarnings && (entry.level ?? 0) >= 40) console.error(`  server: ${line}`);
      return entry.url && entry.msg?.startsWith('listening') ? entry.url : null;
    } catch {
      return null;
    }
  };
}

/** Peak resident set size of a process, from the kernel's high-water mark. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
