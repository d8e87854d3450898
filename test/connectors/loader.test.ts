import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTRACT_VERSION, type ConnectorPlugin } from '../../connectors/contract.js';
import { checkPlugin, loadPlugins, PluginLoadError } from '../../connectors/loader.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import { codeHost, plugin, tool } from './test-plugins.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/plugins/', import.meta.url));

/**
 * A load with one refused plugin: it resolves (the service still starts)
 * and reports that plugin as its only problem; returned as the error it
 * would have been, for asserting on its fields.
 */
async function refusal(load: Promise<PluginRegistry>): Promise<PluginLoadError> {
  const registry = await load;
  expect(registry.problems).toHaveLength(1);
  const [problem] = registry.problems;
  if (!problem) throw new Error('nothing was refused');
  return new PluginLoadError(problem.plugin, problem.origin, problem.problems);
}

const refusalOf = (candidate: unknown): PluginLoadError => {
  try {
    checkPlugin(candidate, 'built-in');
  } catch (error) {
    expect(error).toBeInstanceOf(PluginLoadError);
    return error as PluginLoadError;
  }
  throw new Error('the plugin was accepted');
};

const pluginsFile = (list: unknown): string => {
  const dir = mkdtempSync(join(tmpdir(), 'plugins-'));
  const file = join(dir, 'plugins.json');
  writeFileSync(file, typeof list === 'string' ? list : JSON.stringify(list));
  return file;
};

describe('plugin loader: checks at load', () => {
  it('accepts a plugin that meets the contract and compiles its schemas once', () => {
    const loaded = checkPlugin(codeHost, 'built-in');
    expect(loaded.kind).toBe('github');
    expect(loaded.sourceless).toBe(false);
    expect(loaded.tools.map((t) => [t.name, t.connector])).toEqual([
      ['github.search_issues', 'github'],
      ['github.create_issue', 'github'],
      ['github.get_file', 'github'],
    ]);
    expect(loaded.validateConfig({ token: 't' })).toBe(true);
    expect(loaded.validateConfig({})).toBe(false);
  });

  it('refuses a plugin that is not an object', () => {
    const error = refusalOf(null);
    expect(error.message).toBe('connector plugin "built-in" refused: is not an object (export the plugin as default or as `plugin`)');
  });

  it.each([
    ['an uppercase kind', { kind: 'GitHub' }, 'GitHub', 'kind must match ^[a-z][a-z0-9_]*$'],
    ['a kind with a dash', { kind: 'code-host' }, 'code-host', 'kind must match ^[a-z][a-z0-9_]*$'],
    ['a version that is not semver', { version: '1.0' }, 'ok', 'version "1.0" is not semver'],
    ['a contract that is not a range', { contract: 'banana' }, 'ok', 'contract "banana" is not a semver range'],
    ['a contract range without this version', { contract: '^2' }, 'ok', `contract range "^2" does not accept contract version ${CONTRACT_VERSION}`],
    ['an empty description', { description: '  ' }, 'ok', 'description must be a non-empty string'],
    ['a validate that is not a function', { validate: 'yes' }, 'ok', 'validate must be a function'],
    ['a sourceless flag that is not a boolean', { sourceless: 'yes' }, 'ok', 'sourceless must be a boolean'],
    ['tools that are not an array', { tools: {} }, 'ok', 'tools must be an array'],
  ])('refuses %s', (_label, overrides, label, problem) => {
    const error = refusalOf({ ...plugin({ kind: 'ok' }), ...overrides });
    expect(error.plugin).toBe(label);
    expect(error.problems).toEqual([problem]);
    expect(error.message).toBe(`connector plugin "${label}" (built-in) refused: ${problem}`);
  });

  it('refuses a config schema that does not compile', () => {
    const error = refusalOf(plugin({ kind: 'ok', configSchema: { type: 'object', properties: { token: { type: 'strng' } } } }));
    expect(error.problems).toEqual([
      'configSchema does not compile: schema is invalid: data/properties/token/type must be equal to one of the allowed values, ' +
        'data/properties/token/type must be array, data/properties/token/type must match a schema in anyOf',
    ]);
  });

  it('refuses a config schema with an unknown keyword (a typo is caught at load)', () => {
    const error = refusalOf(plugin({ kind: 'ok', configSchema: { type: 'object', requried: ['token'] } }));
    expect(error.problems).toEqual(['configSchema does not compile: strict mode: unknown keyword: "requried"']);
  });

  it.each([
    ['a tool name with uppercase', tool({ name: 'searchIssues' }), 'tool "searchIssues": name must match ^[a-z][a-z0-9_]*$'],
    ['a tool name with a dot', tool({ name: 'issues.search' }), 'tool "issues.search": name must match ^[a-z][a-z0-9_]*$'],
    ['an empty tool description', tool({ name: 'a', description: '' }), 'tool "a": description must be a non-empty string'],
    ['an effect other than read or write', { ...tool({ name: 'a' }), effect: 'delete' }, 'tool "a": effect must be "read" or "write"'],
    ['a tool without run', { ...tool({ name: 'a' }), run: undefined }, 'tool "a": run must be a function'],
    [
      'an input schema that is not an object schema',
      tool({ name: 'a', input_schema: { type: 'string' } }),
      'tool "a": input_schema must describe an object ("type": "object")',
    ],
    ['an input schema that is not JSON Schema', { ...tool({ name: 'a' }), input_schema: 'object' }, 'tool "a": input_schema is not a JSON Schema object'],
    ['a tool that is not an object', 'search', 'tools[0] is not an object'],
  ])('refuses %s', (_label, badTool, problem) => {
    const error = refusalOf(plugin({ kind: 'ok', tools: [badTool as never] }));
    expect(error.problems).toEqual([problem]);
    expect(error.message).toBe(`connector plugin "ok" (built-in) refused: ${problem}`);
  });

  it('refuses an input schema that does not compile, naming the tool', () => {
    const error = refusalOf(
      plugin({ kind: 'ok', tools: [tool({ name: 'a', input_schema: { type: 'object', properties: { n: { type: 'integer', minimum: 'zero' } } } })] }),
    );
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^tool "a": input_schema does not compile: schema is invalid: /);
  });

  it('refuses duplicate tool names within a plugin', () => {
    const error = refusalOf(plugin({ kind: 'ok', tools: [tool({ name: 'a' }), tool({ name: 'a' })] }));
    expect(error.problems).toEqual(['duplicate tool name ok.a']);
  });

  it('lists every problem of one plugin at once', () => {
    const error = refusalOf({ ...plugin({ kind: 'Bad' }), version: 'x', tools: [{ ...tool({ name: 'A' }), effect: 'maybe' }] });
    expect(error.problems).toEqual([
      'kind must match ^[a-z][a-z0-9_]*$',
      'version "x" is not semver',
      'tool "A": name must match ^[a-z][a-z0-9_]*$',
      'tool "A": effect must be "read" or "write"',
    ]);
  });

  it('refuses two plugins of one kind, naming where the first came from', async () => {
    const error = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: [] }), builtins: [plugin({ kind: 'twin' }), plugin({ kind: 'twin' })] }));
    expect(error.message).toBe('connector plugin "twin" (built-in) refused: duplicate kind "twin" (already loaded from built-in)');
  });

  it('skips a refused plugin, loads the others, and tells the logger its name and every problem', async () => {
    const warnings: { details: Record<string, unknown>; message: string }[] = [];
    const file = pluginsFile({ plugins: [join(FIXTURES, 'no-export.js'), join(FIXTURES, 'echo')] });
    const registry = await loadPlugins({
      pluginsFile: file,
      builtins: [codeHost, plugin({ kind: 'Bad-Kind', version: 'x' }), plugin({ kind: 'after_bad' })],
      logger: { warn: (details, message) => void warnings.push({ details, message }) },
    });
    expect(registry.plugins.map((p) => p.kind)).toEqual(['github', 'after_bad', 'echo']);
    expect(registry.problems.map((problem) => [problem.plugin, problem.origin])).toEqual([
      ['Bad-Kind', 'built-in'],
      [join(FIXTURES, 'no-export.js'), join(FIXTURES, 'no-export.js')],
    ]);
    expect(warnings[0]?.details).toEqual({
      plugin: 'Bad-Kind',
      origin: 'built-in',
      problems: ['kind must match ^[a-z][a-z0-9_]*$', 'version "x" is not semver'],
    });
    expect(warnings[0]?.message).toContain('skipped');
    expect(warnings).toHaveLength(2);
  });

  it('refuses a listTools or sync that is not a function', () => {
    const error = refusalOf({ ...plugin({ kind: 'dyn' }), listTools: 'tools', sync: 1 });
    expect(error.problems).toEqual(['sync must be a function', 'listTools must be a function']);
  });

  it('refuses a plugins.json plugin whose kind a built-in already has', async () => {
    const file = pluginsFile({ plugins: [join(FIXTURES, 'echo')] });
    const error = await refusal(loadPlugins({ pluginsFile: file, builtins: [plugin({ kind: 'echo' })] }));
    expect(error.message).toBe(`connector plugin "echo" (${join(FIXTURES, 'echo')}) refused: duplicate kind "echo" (already loaded from built-in)`);
  });
});

describe('plugin loader: plugins.json', () => {
  it('loads built-ins first, then the listed modules: a package folder, a default export, a named export, a factory', async () => {
    const file = pluginsFile({
      plugins: [join(FIXTURES, 'echo'), join(FIXTURES, 'named-export.js'), join(FIXTURES, 'factory-export.js')],
    });
    const registry = await loadPlugins({ pluginsFile: file, builtins: [codeHost, () => plugin({ kind: 'from_factory' })] });
    expect(registry.plugins.map((p) => [p.kind, p.origin])).toEqual([
      ['github', 'built-in'],
      ['from_factory', 'built-in'],
      ['echo', join(FIXTURES, 'echo')],
      ['named', join(FIXTURES, 'named-export.js')],
      ['made', join(FIXTURES, 'factory-export.js')],
    ]);
    expect(registry.plugin('echo')?.plugin.version).toBe('1.2.0');
    expect(registry.plugin('nope')).toBeUndefined();
  });

  it('resolves relative paths from the folder of the plugins file', async () => {
    const registry = await loadPlugins({ pluginsFile: join(FIXTURES, 'plugins.json') });
    expect(registry.plugins.map((p) => [p.kind, p.origin])).toEqual([['echo', './echo']]);
  });

  it('loads the repository plugins.json (empty) with the built-ins only', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const registry = await loadPlugins({ pluginsFile: join(root, 'plugins.json'), builtins: [codeHost] });
    expect(registry.plugins.map((p) => p.kind)).toEqual(['github']);
  });

  it('refuses a module with neither a default nor a `plugin` export', async () => {
    const specifier = join(FIXTURES, 'no-export.js');
    const error = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: [specifier] }) }));
    expect(error.message).toBe(`connector plugin "${specifier}" refused: exports no plugin (default export or named export \`plugin\`)`);
  });

  it('refuses a path that does not exist and an npm package that is not installed', async () => {
    const missingPath = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: ['./nowhere.js'] }) }));
    expect(missingPath.plugin).toBe('./nowhere.js');
    expect(missingPath.problems[0]).toMatch(/^cannot be imported: Cannot find module /);
    const missingPackage = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: ['connector-not-installed-anywhere'] }) }));
    expect(missingPackage.problems[0]).toMatch(/^cannot be imported: Cannot find package 'connector-not-installed-anywhere'/);
  });

  it('imports an npm package by name and checks it like any plugin', async () => {
    // `semver` is installed but is no connector: it is imported, then refused by the checks
    const error = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: ['semver'] }) }));
    expect(error.origin).toBe('semver');
    expect(error.problems).toContain('kind must match ^[a-z][a-z0-9_]*$');
  });

  it('refuses a factory that throws', async () => {
    const error = await refusal(
      loadPlugins({
        pluginsFile: pluginsFile({ plugins: [] }),
        builtins: [
          (): ConnectorPlugin => {
            throw new Error('no token');
          },
        ],
      }),
    );
    expect(error.message).toBe('connector plugin "built-in" refused: factory threw: no token');
  });

  it('refuses a plugins file that is not JSON, has the wrong shape, or is missing when given', async () => {
    const notJson = await refusal(loadPlugins({ pluginsFile: pluginsFile('{"plugins": [') }));
    expect(notJson.problems[0]).toMatch(/^plugins file is not valid JSON: /);
    const wrongShape = await refusal(loadPlugins({ pluginsFile: pluginsFile({ plugins: [1] }) }));
    expect(wrongShape.problems).toEqual(['plugins file must be {"plugins": ["./path.js" | "npm-package", ...]}']);
    const missing = join(tmpdir(), 'no-such-dir-for-plugins', 'plugins.json');
    const absent = await refusal(loadPlugins({ pluginsFile: missing }));
    expect(absent.message).toBe(`connector plugin "${missing}" refused: plugins file does not exist`);
  });
});
