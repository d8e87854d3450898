/**
 * The KQL conformance kit: ../shared/conformance/kql/cases.jsonl (Kusto's own
 * results for 1,573 self-contained queries) run through the service's KQL
 * path (ingest/kql/run.ts on a DuckDB connection) and compared as the kit's
 * README says: ordered or as a multiset, reals within 1e-9, datetimes to the
 * microsecond, dynamic objects without key order; column names not compared.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runKql } from '../../ingest/kql/run.js';

const CASES_PATH = fileURLToPath(new URL('../../../shared/conformance/kql/cases.jsonl', import.meta.url));

interface Case {
  id: string;
  kql: string;
  rows: unknown[][];
  row_count: number;
  complete_rows: boolean;
  ordered: boolean;
  nondeterministic: boolean;
  set_semantics: boolean;
  operators: string[];
  column_types: string[];
}

export interface ConformanceReport {
  total: number;
  passed: number;
  families: Record<string, { total: number; passed: number }>;
  failures: { id: string; reason: string }[];
}

const FAMILY_OF: Record<string, string> = { order: 'sort', filter: 'where', limit: 'take' };

function canonical(value: unknown, type: string | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (type === 'Real' || (typeof value === 'number' && type !== 'Int')) {
    if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) value = Number(value);
    if (typeof value === 'string') return value;
    if (typeof value !== 'number') return JSON.stringify(value);
    return Number.isInteger(value) && Math.abs(value) < 1e9 ? String(value) : String(Number(value.toPrecision(10)));
  }
  if (type === 'Int' && (typeof value === 'string' || typeof value === 'bigint' || typeof value === 'number') && /^-?[0-9]+$/.test(String(value)))
    return BigInt(value).toString();
  if (type === 'DateTime' && typeof value === 'string') return value.slice(0, 26);
  if (type === 'Dynamic' || typeof value === 'object') return JSON.stringify(sortKeys(value));
  return JSON.stringify(value);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  if (typeof value === 'number' && !Number.isInteger(value)) return Number(value.toPrecision(10));
  return value;
}

const rowKey = (row: unknown[], types: string[]): string => row.map((value, index) => canonical(value, types[index])).join('\u0001');

function compare(expected: Case, rows: unknown[][]): string | null {
  if (rows.length !== expected.row_count) return `row count ${rows.length}, expected ${expected.row_count}`;
  const width = expected.column_types.length;
  if (rows[0] && rows[0].length !== width) return `column count ${rows[0].length}, expected ${width}`;
  const got = rows.map((row) => rowKey(row, expected.column_types));
  const want = expected.rows.map((row) => rowKey(row, expected.column_types));
  if (expected.ordered && expected.complete_rows) {
    for (let index = 0; index < want.length; index += 1) if (got[index] !== want[index]) return `row ${index}: ${got[index]} != ${want[index]}`;
    return null;
  }
  const pool = new Map<string, number>();
  for (const key of got) pool.set(key, (pool.get(key) ?? 0) + 1);
  for (const key of want) {
    const left = pool.get(key) ?? 0;
    if (left === 0) return `missing row ${key}`;
    pool.set(key, left - 1);
  }
  return null;
}

/** JSON integers beyond 2^53 as strings, so int64 values are compared exactly (the README: parse them as 64-bit). */
function quoteBigIntegers(line: string): string {
  let out = '';
  let inString = false;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index] as string;
    if (inString) {
      out += char;
      if (char === '\\') out += line[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') {
      inString = true;
      out += char;
      continue;
    }
    const match = /^-?[0-9]+(?![0-9.eE])/.exec(line.slice(index, index + 40));
    if (match && /[-0-9]/.test(char) && !/[0-9.]/.test(line[index - 1] ?? '')) {
      const digits = match[0];
      out += digits.replace('-', '').length >= 16 ? `"${digits}"` : digits;
      index += digits.length - 1;
      continue;
    }
    out += char;
  }
  return out;
}

function loadCases(): Case[] {
  return readFileSync(CASES_PATH, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(quoteBigIntegers(line)) as Case);
}

/** Runs every deterministic case (no nondeterministic or set-valued ones). */
export async function runConformance(filter?: (id: string) => boolean): Promise<ConformanceReport> {
  const cases = loadCases().filter((c) => !c.nondeterministic && !c.set_semantics && (!filter || filter(c.id)));
  const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await instance.connect();
  const report: ConformanceReport = { total: 0, passed: 0, families: {}, failures: [] };
  try {
    for (const item of cases) {
      let failure: string | null;
      try {
        const result = await runKql(connection, item.kql, [], { limit: 10_000, timeoutMs: 10_000 });
        failure = compare(item, result.rows);
      } catch (error) {
        failure = `error: ${(error as Error).message.slice(0, 200)}`;
      }
      report.total += 1;
      if (failure === null) report.passed += 1;
      else report.failures.push({ id: item.id, reason: failure });
      const families = new Set(item.operators.map((operator) => FAMILY_OF[operator] ?? operator));
      for (const family of families) {
        const entry = (report.families[family] ??= { total: 0, passed: 0 });
        entry.total += 1;
        if (failure === null) entry.passed += 1;
      }
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return report;
}
