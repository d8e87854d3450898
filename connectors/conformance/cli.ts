/**
 * The conformance kit as one command, against an author's package:
 *
 *   npx tsx connectors/conformance/cli.ts <package-dir | entry-file> [--config <file>]
 *
 * It imports the plugin the way plugins.json does (a folder through its
 * package.json `exports`/`main`), reads `conformance.config.(ts|js|mjs)`
 * next to it (or --config), runs every check and prints one line per check.
 * Exit code 0 when all pass, 1 when any fails, 2 on a usage error.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { importPlugin, checkPlugin, PluginLoadError } from '../loader.js';
import type { ConnectorPlugin } from '../contract.js';
import type { ConformanceConfig, ConformanceRunOptions } from './cli-config.js';
import { runConformance } from './run.js';

const CONFIG_NAMES = ['conformance.config.ts', 'conformance.config.js', 'conformance.config.mjs'];

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: conformance <package-dir | entry-file> [--config <conformance.config.js>]\n`);
  process.exit(2);
}

async function main(argv: readonly string[]): Promise<number> {
  const configFlag = argv.indexOf('--config');
  const configArg = configFlag >= 0 ? argv[configFlag + 1] : undefined;
  const positional = argv.filter((arg, index) => !arg.startsWith('--') && (configFlag < 0 || index !== configFlag + 1));
  const target = positional[0];
  if (target === undefined) usage('no package given');
  const path = resolve(target);
  if (!existsSync(path)) usage(`${target} does not exist`);
  const folder = statSync(path).isDirectory() ? path : dirname(path);
  const configFile = configArg !== undefined ? resolve(configArg) : CONFIG_NAMES.map((name) => join(folder, name)).find((file) => existsSync(file));
  if (configFile === undefined) usage(`no ${CONFIG_NAMES.join(' / ')} in ${folder} (or pass --config)`);

  let plugin: ConnectorPlugin;
  try {
    plugin = (await importPlugin(path, folder)) as ConnectorPlugin;
    checkPlugin(plugin, target);
  } catch (error) {
    if (!(error instanceof PluginLoadError)) throw error;
    process.stdout.write(`FAIL ${error.message}\n`);
    return 1;
  }
  const exported = ((await import(pathToFileURL(configFile).href)) as { default?: ConformanceConfig }).default;
  if (exported === undefined) usage(`${configFile} has no default export`);
  const options: ConformanceRunOptions = typeof exported === 'function' ? await exported() : exported;
  try {
    const reports = await runConformance(plugin, options);
    let failed = 0;
    for (const report of reports) {
      if (report.skipped) process.stdout.write(`skip ${report.check}\n`);
      else if (report.problems.length === 0) process.stdout.write(`ok   ${report.check}\n`);
      else {
        failed += 1;
        process.stdout.write(`FAIL ${report.check}\n${report.problems.map((problem) => `       ${problem}`).join('\n')}\n`);
      }
    }
    process.stdout.write(`\n${plugin.kind} ${plugin.version}: ${reports.length - failed} passed, ${failed} failed\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    await options.teardown?.();
  }
}

process.exitCode = await main(process.argv.slice(2));
