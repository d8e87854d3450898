/**
 * The command-line client as a download: `cli/main.ts` bundled by esbuild
 * into one ES module (its two dependencies inside), packed the way `npm pack`
 * lays a package out (`package/...` in a gzipped tar) with fixed timestamps,
 * so the same source gives the same bytes and the same SHA-256 on every
 * start. Built once per process, on the first request that needs it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { pack } from 'tar-stream';

export const CLI_NAME = 'service-proxy-cli';

export interface CliPackage {
  readonly version: string;
  /** `service-proxy-cli-<version>.tgz` */
  readonly fileName: string;
  readonly tarball: Buffer;
  /** lowercase hex of the tarball's SHA-256 */
  readonly sha256: string;
}

/** npm pack's fixed entry time (1985-10-26T08:15:00Z): archives do not change with the clock */
const FIXED_MTIME = new Date(499162500000);

/** the folder holding this package's package.json, from source (tsx) or from dist/ */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json')) || !existsSync(join(folder, 'cli', 'main.ts'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('cli package: cannot find the folder holding cli/main.ts');
    folder = parent;
  }
  return folder;
}

/**
 * Packages shipped beside the bundle instead of inside it: `@cdktf/hcl2json`
 * loads its WebAssembly from its own folder at run time, which a bundle
 * cannot hold. They go under `package/node_modules/` with their dependencies.
 */
const UNBUNDLED = ['@cdktf/hcl2json'] as const;

/** the folder of `name` as Node would resolve it from `from` (a package folder), walking up to the project root */
function packageFolder(name: string, from: string, root: string): string {
  for (let folder = from; ; folder = dirname(folder)) {
    const candidate = join(folder, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (folder === root || dirname(folder) === folder) throw new Error(`cli package: cannot find ${name} from ${from}`);
  }
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((entry) => {
      const path = join(folder, entry);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** every file of the unbundled packages and of their dependencies, as tar entries under node_modules/ */
function unbundledEntries(root: string): { name: string; body: Buffer; mode: number }[] {
  const entries = new Map<string, { name: string; body: Buffer; mode: number }>();
  const pending: { name: string; from: string }[] = UNBUNDLED.map((name) => ({ name, from: root }));
  const seen = new Set<string>();
  while (pending.length > 0) {
    const { name, from } = pending.shift() as { name: string; from: string };
    const folder = packageFolder(name, from, root);
    if (seen.has(folder)) continue;
    seen.add(folder);
    for (const file of filesUnder(folder)) {
      const name = relative(root, file).split('\\').join('/');
      entries.set(name, { name, body: readFileSync(file), mode: 0o644 });
    }
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) pending.push({ name: dependency, from: folder });
  }
  return [...entries.values()];
}

/** the Terraform provider's .proto files, beside the bundle where it looks for them (`./proto/` of its module) */
function protoEntries(root: string): { name: string; body: Buffer; mode: number }[] {
  const folder = join(root, 'cli', 'terraform', 'proto');
  return readdirSync(folder)
    .filter((file) => file.endsWith('.proto'))
    .sort()
    .map((file) => ({ name: `bin/proto/${file}`, body: readFileSync(join(folder, file)), mode: 0o644 }));
}

async function bundle(root: string): Promise<Buffer> {
  const result = await build({
    entryPoints: [join(root, 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    external: [...UNBUNDLED],
    // bundled CommonJS dependencies call require() for Node built-ins
    banner: { js: "import { createRequire as cliCreateRequire } from 'node:module'; const require = cliCreateRequire(import.meta.url);" },
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('cli package: esbuild produced no output');
  return Buffer.from(output.contents);
}

function tar(entries: readonly { name: string; body: Buffer; mode: number }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const done = new Promise<Buffer>((resolve, reject) => {
    archive.on('end', () => resolve(Buffer.concat(chunks)));
    archive.on('error', reject);
  });
  for (const entry of entries) archive.entry({ name: `package/${entry.name}`, mode: entry.mode, mtime: FIXED_MTIME, uid: 0, gid: 0 }, entry.body);
  archive.finalize();
  return done;
}

async function buildPackage(): Promise<CliPackage> {
  const root = packageRoot();
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const manifest = {
    name: CLI_NAME,
    version,
    description: 'Command-line client of the automation and context service (graph, files, pipeline-run reports)',
    type: 'module',
    bin: { [CLI_NAME]: `bin/${CLI_NAME}.mjs` },
    engines: { node: '>=20.19' },
    license: 'MIT',
  };
  const readme = [
    `# ${CLI_NAME} ${version}`,
    '',
    'Set SERVICE_API_URL (the API root, ending in /api/v1) and SERVICE_TOKEN, then run',
    `\`${CLI_NAME} --help\`. Built and served by the service at /api/v1/cli/.`,
    '',
  ].join('\n');
  const tarball = gzipSync(
    await tar([
      { name: 'package.json', body: Buffer.from(JSON.stringify(manifest, null, 2) + '\n'), mode: 0o644 },
      { name: 'README.md', body: Buffer.from(readme), mode: 0o644 },
      { name: `bin/${CLI_NAME}.mjs`, body: await bundle(root), mode: 0o755 },
      ...unbundledEntries(root),
      ...protoEntries(root),
    ]),
    { level: 9 },
  );
  return { version, fileName: `${CLI_NAME}-${version}.tgz`, tarball, sha256: createHash('sha256').update(tarball).digest('hex') };
}

/** The package, built on first use; a failed build is retried by the next call. */
export class CliPackageBuilder {
  private pending: Promise<CliPackage> | null = null;

  get(): Promise<CliPackage> {
    this.pending ??= buildPackage().catch((error: unknown) => {
      this.pending = null;
      throw error;
    });
    return this.pending;
  }
}
