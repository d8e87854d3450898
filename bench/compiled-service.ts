/**
 * The service as `npm start` runs it: plain JavaScript in `dist/`, without
 * tsx's loader. Under `node --import tsx` the loader thread and the compiled
 * sources it keeps cost ~120 MB of resident memory (idle server: 388 MB vs
 * 270 MB), which a memory figure must not count. `tsc -p tsconfig.build.json`
 * takes minutes on the 2-core machine; TypeScript's per-file transpiler
 * (no type check: `npm run typecheck` does that) writes the same files in
 * seconds.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './lib.js';

/** What the production build compiles (tsconfig.build.json) plus the domains it imports. */
const SOURCES = ['main.ts', 'worker.ts', 'worker', 'gateway', 'runtime', 'actors', 'connectors', 'ingest', 'domains', 'cli', 'bench/memory-probe.ts'];

function* typescriptFiles(path: string): Generator<string> {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path)) yield* typescriptFiles(join(path, entry));
  } else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) yield path;
}

/** Transpiles the service into `dist/` and returns the entry point to run with `node`. */
export function compileService(): string {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  // the package is "type": "module": ES modules (the per-file transpiler cannot read package.json to decide)
  const options = { ...parsed.options, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler };
  const outDir = join(ROOT, 'dist');
  for (const source of SOURCES) {
    for (const file of typescriptFiles(join(ROOT, source))) {
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: options, fileName: file });
      const target = join(outDir, relative(ROOT, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, outputText);
    }
  }
  return join(outDir, 'main.js');
}
