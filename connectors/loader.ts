/**
 * Loads connector plugins at start: the built-ins the caller passes plus the
 * modules listed in `plugins.json` (`{"plugins": ["./path.js", "npm-name"]}`).
 * Every plugin is checked before anything runs (kind, semver version,
 * contract range, tool names, effects, descriptions, schemas that compile,
 * unique kinds and `<kind>.<tool>` names); a bad one is refused with a
 * PluginLoadError naming the plugin and every problem found. Schemas are
 * compiled once here and kept with the plugin. A refused plugin is skipped
 * and reported; the others still load.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { CONTRACT_VERSION, PORT_NAMES, type ConnectorPlugin, type ConnectorPluginFactory, type NetPort, type PortName, type PortOffers } from './contract.js';
import type { LoadedPlugin, LoadedTool, PluginProblem, PluginRegistry } from '../runtime/tools/registry.js';
import { checkTool, compileProblem, isRecord, NAME_PATTERN, nonEmptyString } from '../runtime/tools/tool-checks.js';

const CONTRACT_SEMVER = `${CONTRACT_VERSION}.0.0`;

/** Where loadPlugins reports a refused plugin (pino's `warn` fits). */
interface PluginProblemLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** A plugin (or the plugins file) is refused; `problems` lists everything found wrong with it. */
export class PluginLoadError extends Error {
  constructor(
    /** the plugin's kind when it has a usable one, else its origin */
    readonly plugin: string,
    readonly origin: string,
    readonly problems: readonly string[],
  ) {
    super(`connector plugin ${plugin === origin ? `"${plugin}"` : `"${plugin}" (${origin})`} refused: ${problems.join('; ')}`);
    this.name = 'PluginLoadError';
  }
}

export interface LoadPluginsOptions {
  /**
   * the plugins.json to read; relative plugin paths resolve from its folder
   * (the repository root for the default). Default: `./plugins.json` of the
   * working directory, where a missing file means no extra plugins; a file
   * given explicitly must exist.
   */
  readonly pluginsFile?: string;
  /** built-in plugins (or factories), checked like any other */
  readonly builtins?: readonly (ConnectorPlugin | ConnectorPluginFactory)[];
  /** told about every refused plugin, with its name and every problem */
  readonly logger?: PluginProblemLogger;
  /** the egress guard the plugins' calls go through (the service always passes it) */
  readonly net?: NetPort;
  /** the ports the service offers; a plugin requiring another one is refused */
  readonly ports?: PortOffers;
}

/** The `requires` of a plugin, or its problems (not a list of distinct known port names). */
function requiresOf(value: unknown, problems: string[]): readonly PortName[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push('requires must be an array of port names');
    return [];
  }
  const known = new Set<unknown>(PORT_NAMES);
  for (const name of value) if (!known.has(name)) problems.push(`requires an unknown port ${JSON.stringify(name)} (ports: ${PORT_NAMES.join(', ')})`);
  if (new Set(value).size !== value.length) problems.push('requires names a port twice');
  return value as PortName[];
}

/**
 * Checks one plugin against the contract (everything but cross-plugin
 * uniqueness, which createRegistry checks) and compiles its schemas.
 * @throws PluginLoadError naming the plugin and listing every problem
 */
export function checkPlugin(candidate: unknown, origin: string): LoadedPlugin {
  if (!isRecord(candidate)) throw new PluginLoadError(origin, origin, ['is not an object (export the plugin as default or as `plugin`)']);
  const problems: string[] = [];
  const kind = candidate['kind'];
  const label = typeof kind === 'string' && kind.length > 0 ? kind : origin;
  if (typeof kind !== 'string' || !NAME_PATTERN.test(kind)) problems.push(`kind must match ${NAME_PATTERN.source}`);
  const version = candidate['version'];
  if (typeof version !== 'string' || semver.valid(version) === null) problems.push(`version ${JSON.stringify(version)} is not semver`);
  const contract = candidate['contract'];
  if (typeof contract !== 'string' || semver.validRange(contract) === null) {
    problems.push(`contract ${JSON.stringify(contract)} is not a semver range`);
  } else if (!semver.satisfies(CONTRACT_SEMVER, contract)) {
    problems.push(`contract range "${contract}" does not accept contract version ${CONTRACT_VERSION}`);
  }
  if (!nonEmptyString(candidate['description'])) problems.push('description must be a non-empty string');
  if (typeof candidate['validate'] !== 'function') problems.push('validate must be a function');
  if (candidate['sourceless'] !== undefined && typeof candidate['sourceless'] !== 'boolean') problems.push('sourceless must be a boolean');
  if (candidate['sync'] !== undefined && typeof candidate['sync'] !== 'function') problems.push('sync must be a function');
  if (candidate['listTools'] !== undefined && typeof candidate['listTools'] !== 'function') problems.push('listTools must be a function');
  if (candidate['visibleTools'] !== undefined && typeof candidate['visibleTools'] !== 'function') problems.push('visibleTools must be a function');
  for (const hook of ['releaseSource', 'close']) {
    if (candidate[hook] !== undefined && typeof candidate[hook] !== 'function') problems.push(`${hook} must be a function`);
  }
  if (candidate['listTools'] !== undefined && candidate['sourceless'] === true) problems.push('listTools needs a source: a sourceless plugin cannot have it');
  const requires = requiresOf(candidate['requires'], problems);
  const config = compileProblem('configSchema', candidate['configSchema']);
  if (config.problem) problems.push(config.problem);

  const tools: LoadedTool[] = [];
  const rawTools = candidate['tools'];
  if (!Array.isArray(rawTools)) {
    problems.push('tools must be an array');
  } else {
    const names = new Set<string>();
    rawTools.forEach((rawTool, index) => {
      const tool = checkTool(typeof kind === 'string' ? kind : '?', rawTool, index, problems);
      if (!tool) return;
      if (names.has(tool.name)) problems.push(`duplicate tool name ${tool.name}`);
      names.add(tool.name);
      tools.push(tool);
    });
  }
  if (problems.length > 0 || !config.validator) throw new PluginLoadError(label, origin, problems);
  const plugin = candidate as unknown as ConnectorPlugin;
  return {
    kind: plugin.kind,
    plugin,
    origin,
    sourceless: plugin.sourceless === true,
    runOnly: plugin.runOnly === true,
    requires,
    validateConfig: config.validator,
    tools,
  };
}

/** At shutdown: every plugin's `close` (pools, sessions); one that fails does not stop the others. */
export async function closePlugins(registry: Pick<PluginRegistry, 'plugins'>): Promise<void> {
  await Promise.allSettled(registry.plugins.map(async (loaded) => loaded.plugin.close?.()));
}

/**
 * Puts checked plugins together, refusing a kind or a `<kind>.<tool>` name
 * that appears twice.
 * @throws PluginLoadError naming the second plugin and the first one's origin
 */
export function createRegistry(plugins: readonly LoadedPlugin[]): PluginRegistry {
  const byKind = new Map<string, LoadedPlugin>();
  const toolOrigin = new Map<string, string>();
  for (const loaded of plugins) {
    const first = byKind.get(loaded.kind);
    if (first) throw new PluginLoadError(loaded.kind, loaded.origin, [`duplicate kind "${loaded.kind}" (already loaded from ${first.origin})`]);
    for (const tool of loaded.tools) {
      const other = toolOrigin.get(tool.name);
      if (other) throw new PluginLoadError(loaded.kind, loaded.origin, [`duplicate tool name ${tool.name} (already loaded from ${other})`]);
      toolOrigin.set(tool.name, loaded.origin);
    }
    byKind.set(loaded.kind, loaded);
  }
  const list = [...byKind.values()];
  return { plugins: list, plugin: (kind) => byKind.get(kind), problems: [] };
}

/** Reads the list of module specifiers; a missing optional file is an empty list. */
function readPluginList(file: string, required: boolean): string[] {
  if (!existsSync(file)) {
    if (required) throw new PluginLoadError(file, file, ['plugins file does not exist']);
    return [];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new PluginLoadError(file, file, [`plugins file is not valid JSON: ${(error as Error).message}`]);
  }
  const list = isRecord(parsed) ? parsed['plugins'] : undefined;
  if (!Array.isArray(list) || !list.every((entry) => nonEmptyString(entry))) {
    throw new PluginLoadError(file, file, ['plugins file must be {"plugins": ["./path.js" | "npm-package", ...]}']);
  }
  return list;
}

const isPathSpecifier = (specifier: string): boolean => specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier);

/** The file URL to import for a path; a folder is imported through its package.json (`exports` or `main`). */
function moduleUrlOfPath(path: string): string {
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return pathToFileURL(path).href;
  const manifestFile = join(path, 'package.json');
  let entry = 'index.js';
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
    const exported = manifest['exports'];
    const dot = isRecord(exported) ? (exported['.'] ?? exported) : exported;
    const target = typeof dot === 'string' ? dot : isRecord(dot) ? (dot['import'] ?? dot['default']) : undefined;
    if (typeof target === 'string') entry = target;
    else if (typeof manifest['main'] === 'string') entry = manifest['main'];
  }
  return pathToFileURL(join(path, entry)).href;
}

/** Imports one plugins.json entry and returns its plugin (calling a factory export). */
export async function importPlugin(specifier: string, baseDir: string): Promise<unknown> {
  let module: Record<string, unknown>;
  try {
    const target = isPathSpecifier(specifier) ? moduleUrlOfPath(resolve(baseDir, specifier)) : specifier;
    module = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    throw new PluginLoadError(specifier, specifier, [`cannot be imported: ${(error as Error).message}`]);
  }
  const exported = module['default'] ?? module['plugin'];
  if (exported === undefined) throw new PluginLoadError(specifier, specifier, ['exports no plugin (default export or named export `plugin`)']);
  return instantiate(exported, specifier);
}

async function instantiate(exported: unknown, origin: string): Promise<unknown> {
  if (typeof exported !== 'function') return exported;
  try {
    return await (exported as ConnectorPluginFactory)();
  } catch (error) {
    throw new PluginLoadError(origin, origin, [`factory threw: ${(error as Error).message}`]);
  }
}

/**
 * Loads and checks the built-ins and every plugin of the plugins file, in
 * that order. A plugin that cannot be imported, fails its checks, or repeats
 * a kind or tool name already loaded is skipped and reported (in
 * `registry.problems` and to `logger`); the others load, so the service
 * still starts. A plugins file that is missing (when given explicitly) or
 * malformed is reported the same way, and only the built-ins load.
 */
export async function loadPlugins(options: LoadPluginsOptions = {}): Promise<PluginRegistry> {
  const pluginsFile = resolve(options.pluginsFile ?? 'plugins.json');
  const loaded: LoadedPlugin[] = [];
  const problems: PluginProblem[] = [];
  const refuse = (error: unknown): void => {
    if (!(error instanceof PluginLoadError)) throw error;
    const problem: PluginProblem = { plugin: error.plugin, origin: error.origin, problems: error.problems };
    problems.push(problem);
    options.logger?.warn({ plugin: problem.plugin, origin: problem.origin, problems: problem.problems }, `${error.message}; skipped`);
  };
  /** adds a checked plugin unless it requires a port the service does not offer, or its kind or a tool name is taken */
  const admit = (plugin: LoadedPlugin): void => {
    try {
      const missing = plugin.requires.filter((name) => options.ports?.[name] === undefined);
      if (missing.length > 0) {
        throw new PluginLoadError(
          plugin.kind,
          plugin.origin,
          missing.map((name) => `requires the port "${name}", which this service does not offer`),
        );
      }
      createRegistry([...loaded, plugin]);
      loaded.push(plugin);
    } catch (error) {
      refuse(error);
    }
  };
  for (const builtin of options.builtins ?? []) {
    try {
      admit(checkPlugin(await instantiate(builtin, 'built-in'), 'built-in'));
    } catch (error) {
      refuse(error);
    }
  }
  const baseDir = dirname(pluginsFile);
  let specifiers: string[] = [];
  try {
    specifiers = readPluginList(pluginsFile, options.pluginsFile !== undefined);
  } catch (error) {
    refuse(error);
  }
  for (const specifier of specifiers) {
    try {
      admit(checkPlugin(await importPlugin(specifier, baseDir), specifier));
    } catch (error) {
      refuse(error);
    }
  }
  return {
    ...createRegistry(loaded),
    problems,
    ...(options.net === undefined ? {} : { net: options.net }),
    ...(options.ports === undefined ? {} : { ports: options.ports }),
  };
}
