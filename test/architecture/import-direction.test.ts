/**
 * The layout's rules, read from the code with TypeScript's own import scan:
 * gateway -> domains -> {runtime, actors, ingest, connectors' contract}; the
 * platform never imports a domain or the gateway; a built-in connector imports
 * only the contract (and the shared helpers of built-ins); the README's layout
 * table names exactly the top-level folders; no source file passes 450 lines.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['gateway', 'domains', 'runtime', 'actors', 'ingest', 'connectors', 'cli', 'worker'];
const MAX_LINES = 450;
/** files still to be split (the list only shrinks) */
const LONG_FILES: readonly string[] = [];

type Layer = 'gateway' | 'domains' | 'platform' | 'contract' | 'host' | 'connector' | 'cli' | 'worker' | 'outside';

/** what each layer may import (a layer always sees itself, except built-ins, which see their own folder) */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  gateway: ['gateway', 'domains', 'platform', 'contract', 'host'],
  domains: ['domains', 'platform', 'contract'],
  platform: ['platform', 'contract'],
  contract: ['contract'],
  // the loader, the built-ins list and the conformance kit: the host side of the contract
  host: ['host', 'contract', 'connector', 'platform'],
  connector: ['contract', 'connector'],
  cli: ['cli'],
  // the worker process: the platform (clock, agent runtime, LLM adapters, egress guard), never a domain or the gateway
  worker: ['worker', 'platform', 'contract'],
  outside: [],
};

/** Imports against the direction that are still to be removed; the test fails when one is gone too, so the list only shrinks. */
const KNOWN_EXCEPTIONS: readonly string[] = [];

function layerOf(path: string): Layer {
  if (path.startsWith('gateway/')) return 'gateway';
  if (path.startsWith('domains/')) return 'domains';
  if (/^(runtime|actors|ingest)\//.test(path)) return 'platform';
  if (path === 'connectors/contract.ts') return 'contract';
  if (/^connectors\/(loader|builtins)\.ts$/.test(path) || path.startsWith('connectors/conformance/')) return 'host';
  // the template is a third-party package's starting point: it runs the kit like any plugin author
  if (path.startsWith('connectors/template/')) return 'host';
  if (path.startsWith('connectors/')) return 'connector';
  if (path.startsWith('cli/')) return 'cli';
  if (path.startsWith('worker/')) return 'worker';
  return 'outside';
}

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(relative(ROOT, path));
    }
  };
  for (const dir of SOURCE_DIRS) walk(join(ROOT, dir));
  return files;
}

/** relative imports of a file, as repository paths of .ts files */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(ROOT, resolve(dirname(join(ROOT, file)), name)).replace(/\.js$/, '.ts'));
}

/** a built-in connector's folder: connectors/<name>/... */
const builtinOf = (path: string): string => path.split('/')[1] ?? '';

function violations(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles()) {
    const from = layerOf(file);
    for (const target of importsOf(file)) {
      const to = layerOf(target);
      let allowed = ALLOWED[from].includes(to);
      if (allowed && from === 'connector' && to === 'connector') {
        allowed = builtinOf(target) === builtinOf(file) || builtinOf(target) === 'shared';
      }
      if (!allowed) found.push(`${file} -> ${target}`);
    }
  }
  return [...new Set(found)].sort();
}

describe('import direction', () => {
  it('has no import against gateway -> domains -> {runtime, actors, ingest, connectors contract}', () => {
    const found = violations();
    expect(found.filter((line) => !KNOWN_EXCEPTIONS.includes(line))).toEqual([]);
    // a removed exception leaves the list
    expect(KNOWN_EXCEPTIONS.filter((line) => !found.includes(line))).toEqual([]);
  });

  it('classifies every source file into a layer', () => {
    expect(sourceFiles().filter((file) => layerOf(file) === 'outside')).toEqual([]);
  });
});

describe('layout', () => {
  it("keeps the README's layout table in step with the top-level folders", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Layout'), readme.indexOf('\n## ', readme.indexOf('## Layout') + 1));
    const listed = [...section.matchAll(/^\| `([a-z-]+)\/` \|/gm)].map((match) => match[1]).sort();
    const folders = readdirSync(ROOT)
      .filter((entry) => !entry.startsWith('.') && !['node_modules', 'dist', 'data'].includes(entry))
      .filter((entry) => statSync(join(ROOT, entry)).isDirectory())
      .sort();
    expect(listed).toEqual(folders);
  });

  it('gives every top-level source folder a README', () => {
    for (const dir of [...SOURCE_DIRS, 'test', 'bench']) {
      expect(() => statSync(join(ROOT, dir, 'README.md')), dir).not.toThrow();
    }
  });

  it(`keeps source files under ${MAX_LINES} lines`, () => {
    const long = sourceFiles()
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file }) => file);
    expect(long.filter((file) => !LONG_FILES.includes(file))).toEqual([]);
    expect(LONG_FILES.filter((file) => !long.includes(file))).toEqual([]);
  });
});
