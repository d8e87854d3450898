/**
 * OPA conformance runner: reads the YAML cases of OPA's test/cases/testdata/v1 and runs each against
 * the engine, comparing as OPA's tester does (sorted bindings when asked, error code equality and
 * message substring). A case is skipped only when it calls a built-in this engine does not implement.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, RegoError, UnsupportedBuiltin, toJSON } from '../index.js';
import { RObject, RSet, compareNumbers, isNumber, type Value } from '../value.js';

// js-yaml ships no types of its own here; it is used only to read the case files
const yaml = createRequire(import.meta.url)('js-yaml') as { load: (text: string) => unknown };

/** `shared/` lies beside the repository's checkout (as on developer machines and in CI) */
export const CASES_DIR = fileURLToPath(new URL('../../../../shared/conformance/opa-v1', import.meta.url));

interface Case {
  readonly note: string;
  readonly query: string;
  readonly modules?: string[];
  readonly data?: unknown;
  readonly input?: unknown;
  readonly input_term?: string;
  readonly want_result?: Record<string, unknown>[];
  readonly want_error_code?: string;
  readonly want_error?: string;
  readonly sort_bindings?: boolean;
  readonly strict_error?: boolean;
}

type Outcome = { readonly status: 'pass' } | { readonly status: 'fail'; readonly reason: string } | { readonly status: 'skip'; readonly builtin: string };

export interface CaseResult {
  readonly folder: string;
  readonly file: string;
  readonly note: string;
  readonly outcome: Outcome;
}

function loadCases(dir = CASES_DIR): { folder: string; file: string; c: Case }[] {
  const out: { folder: string; file: string; c: Case }[] = [];
  for (const folder of readdirSync(dir).sort()) {
    const fdir = join(dir, folder);
    if (!statSync(fdir).isDirectory()) continue;
    for (const file of readdirSync(fdir).sort()) {
      if (!file.endsWith('.yaml') && !file.endsWith('.yml')) continue;
      const doc = yaml.load(readFileSync(join(fdir, file), 'utf8')) as { cases?: Case[] };
      for (const c of doc.cases ?? []) out.push({ folder, file, c });
    }
  }
  return out;
}

/** a result value against the expected JSON: sets (JSON arrays in the cases) compare as sets */
function matches(got: Value, want: unknown, unordered = false): boolean {
  if (got instanceof RSet) return Array.isArray(want) && sameMultiset([...got.values()], want, unordered);
  if (Array.isArray(got)) {
    if (!Array.isArray(want)) return false;
    return unordered ? sameMultiset(got, want, true) : got.length === want.length && got.every((g, i) => matches(g, want[i]));
  }
  if (got instanceof RObject) {
    if (want === null || typeof want !== 'object' || Array.isArray(want)) return false;
    const w = want as Record<string, unknown>;
    if (Object.keys(w).length !== got.size) return false;
    return [...got.entries()].every(([k, v]) => {
      const key = typeof k === 'string' ? k : JSON.stringify(toJSON(k));
      return Object.prototype.hasOwnProperty.call(w, key) && matches(v, w[key], unordered);
    });
  }
  if (isNumber(got)) return (typeof want === 'number' && compareNumbers(got, want) === 0) || (typeof got === 'bigint' && Number(got) === want);
  return got === want;
}

function sameMultiset(got: Value[], want: unknown[], unordered = false): boolean {
  if (got.length !== want.length) return false;
  const used = new Set<number>();
  return want.every((w) => {
    const i = got.findIndex((g, j) => !used.has(j) && matches(g, w, unordered));
    if (i < 0) return false;
    used.add(i);
    return true;
  });
}

function runCase(c: Case): Outcome {
  let rows: Map<string, Value>[];
  try {
    const bundle = compile(
      (c.modules ?? []).map((source, i) => ({ source, name: `module-${i}.rego` })),
      { data: c.data ?? {} },
    );
    rows = bundle.queryValues(c.query, {
      ...(c.input !== undefined ? { input: c.input } : {}),
      ...(c.input_term !== undefined ? { inputTerm: c.input_term } : {}),
      strictBuiltinErrors: c.strict_error === true,
      nowNs: 1_700_000_000_000_000_000n,
    });
  } catch (err) {
    if (err instanceof UnsupportedBuiltin) return { status: 'skip', builtin: err.detail.split(':')[0]! };
    if (!(err instanceof RegoError)) return { status: 'fail', reason: `crash: ${(err as Error).stack ?? String(err)}` };
    if (c.want_error_code === undefined && c.want_error === undefined) return { status: 'fail', reason: `unexpected error ${err.message}` };
    if (c.want_error_code !== undefined && err.code !== c.want_error_code)
      return { status: 'fail', reason: `want code ${c.want_error_code}, got ${err.message}` };
    if (c.want_error !== undefined && !err.message.includes(c.want_error))
      return { status: 'fail', reason: `want error ${JSON.stringify(c.want_error)}, got ${err.message}` };
    return { status: 'pass' };
  }
  if (c.want_error_code !== undefined || c.want_error !== undefined)
    return { status: 'fail', reason: `want error ${c.want_error_code ?? ''} ${c.want_error ?? ''}, got ${JSON.stringify(rows)}` };
  const want = c.want_result ?? [];
  const gotRows: Value[] = rows.map((row) => RObject.fromEntries(row));
  // OPA's tester sorts arrays in the bindings too when sort_bindings is set
  const ok = c.sort_bindings ? sameMultiset(gotRows, want, true) : gotRows.length === want.length && gotRows.every((g, i) => matches(g, want[i]));
  if (ok) return { status: 'pass' };
  return { status: 'fail', reason: `want ${JSON.stringify(want)}, got ${JSON.stringify(gotRows.map(toJSON))}` };
}

export function runAll(dir = CASES_DIR): CaseResult[] {
  return loadCases(dir).map(({ folder, file, c }) => ({ folder, file, note: c.note, outcome: runCase(c) }));
}

export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

export function tally(results: readonly CaseResult[]): { folders: Map<string, Tally>; total: Tally; skips: Map<string, number> } {
  const folders = new Map<string, Tally>();
  const total: Tally = { passed: 0, failed: 0, skipped: 0 };
  const skips = new Map<string, number>();
  for (const r of results) {
    const t = folders.get(r.folder) ?? { passed: 0, failed: 0, skipped: 0 };
    folders.set(r.folder, t);
    const key = r.outcome.status === 'pass' ? 'passed' : r.outcome.status === 'fail' ? 'failed' : 'skipped';
    t[key]++;
    total[key]++;
    if (r.outcome.status === 'skip') skips.set(r.outcome.builtin, (skips.get(r.outcome.builtin) ?? 0) + 1);
  }
  return { folders, total, skips };
}

export function report(results: readonly CaseResult[]): string {
  const { folders, total, skips } = tally(results);
  const lines = [...folders].map(([f, t]) => `${f}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  lines.push(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  for (const [b, n] of skips) lines.push(`skipped (built-in not implemented: ${b}): ${n}`);
  return lines.join('\n');
}
