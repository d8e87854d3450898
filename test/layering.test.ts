/** Architecture rules that a grep can keep: each is a place where a shortcut would be a security or design bug. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../runtime/errors.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_DIRS = ['gateway', 'runtime', 'actors', 'connectors', 'ingest', 'cli', 'worker'];

function sourceFiles(): string[] {
  const files: string[] = [join(ROOT, 'main.ts'), join(ROOT, 'worker.ts')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) walk(join(ROOT, dir));
  return files;
}

/** source text without comments, so documentation may name what code must not use */
const code = (file: string): string =>
  readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

function offenders(pattern: RegExp, allowed: readonly string[]): string[] {
  return sourceFiles()
    .map((file) => relative(ROOT, file))
    .filter((file) => !allowed.includes(file))
    .filter((file) => pattern.test(code(join(ROOT, file))));
}

describe('layering', () => {
  it('reads the environment only in runtime/config.ts (and the CLI and the worker, separate programs, in cli/main.ts and worker.ts)', () => {
    expect(offenders(/process\.env/, ['runtime/config.ts', 'cli/main.ts', 'worker.ts'])).toEqual([]);
  });

  it('compares secrets and signatures only through runtime/crypto.ts (constant time, raw bytes)', () => {
    expect(offenders(/timingSafeEqual/, ['runtime/crypto.ts'])).toEqual([]);
    expect(offenders(/createHmac\(/, ['runtime/crypto.ts'])).toEqual([]);
  });

  it('builds errors from the catalogue, never as ad-hoc envelopes', () => {
    expect(offenders(/error:\s*\{\s*code:/, ['runtime/errors.ts'])).toEqual([]);
  });

  it('reads the time only through the injected clock (runtime/clock.ts), or says why on the line or the one above', () => {
    // `Date.now()`, `new Date()` and `Date.now` passed as a function; documentation may name them
    const direct = /Date\.now\b|new Date\(\)/;
    const reads: string[] = [];
    for (const file of sourceFiles().map((path) => relative(ROOT, path))) {
      if (file === 'runtime/clock.ts' || file.startsWith('cli/')) continue;
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, index) => {
        const trimmed = line.trim();
        if (trimmed.startsWith('*') || trimmed.startsWith('/*') || trimmed.startsWith('//')) return;
        if (!direct.test(line.replace(/\/\/.*$/, ''))) return;
        if (line.includes('wall clock:') || (lines[index - 1] ?? '').includes('wall clock:')) return;
        reads.push(`${file}:${index + 1}`);
      });
    }
    expect(reads).toEqual([]);
  });
});

describe('error catalogue', () => {
  it('lists every code in README.md with its status', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const rows = new Map([...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]));
    const catalog = new Map(Object.entries(ERROR_CATALOG).map(([code, entry]) => [code, entry.status]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(catalog));
  });

  it('uses snake_case codes and the statuses the spec names', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect([400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503]).toContain(entry.status);
    }
  });
});
