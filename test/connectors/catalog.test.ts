import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type CatalogSource, type ResolvedToolCall, type ToolCatalog } from '../../runtime/tools/catalog.js';
import type { ToolInterceptor } from '../../runtime/tools/interceptors.js';
import { createRegistry, checkPlugin } from '../../connectors/loader.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import { acmeCreateIssueEntry, chat, codeHost, failing, plugin, tool } from './test-plugins.js';

const acme: CatalogSource = { id: 'src_acme', kind: 'github', name: 'Acme GitHub', config: { token: 'acme-token' } };
const personal: CatalogSource = {
  id: 'src_personal',
  kind: 'github',
  name: 'Personal GitHub',
  config: { token: 'mine', base_url: 'https://git.example.test/api' },
};
/** the two sources offering the github tools, as a refusal names them */
const GITHUB_CHOICES = [
  { source_id: 'src_acme', source_name: 'Acme GitHub' },
  { source_id: 'src_personal', source_name: 'Personal GitHub' },
];
const team: CatalogSource = { id: 'src_team', kind: 'slack', name: 'Team chat', config: {} };

let calls = 0;
const counter = plugin({
  kind: 'counter',
  sourceless: true,
  tools: [
    tool({
      name: 'bump',
      effect: 'write',
      description: 'Adds one to a counter.',
      run: async () => {
        calls += 1;
        return { calls };
      },
    }),
  ],
});

const registryOf = (...plugins: Parameters<typeof checkPlugin>[0][]): PluginRegistry => createRegistry(plugins.map((p) => checkPlugin(p, 'built-in')));

const ctx = (signal = new AbortController().signal) => ({ orgId: 'org_1', signal });

const names = (list: readonly { name: string; source_id?: string }[]) =>
  list.map((entry) => (entry.source_id ? `${entry.name}@${entry.source_id}` : entry.name));

function resolved(catalog: ToolCatalog, name: string, args: unknown, sourceId?: string): ResolvedToolCall {
  const resolution = catalog.resolve(name, args, sourceId);
  if (!resolution.ok) throw new Error(`expected ${name} to resolve: ${JSON.stringify(resolution.error)}`);
  return resolution;
}

describe('tool catalog: visibility and search', () => {
  let registry: PluginRegistry;
  beforeAll(() => {
    registry = registryOf(codeHost, chat, failing);
  });

  it('shows a source plugin once per visible source, sourceless plugins always, and nothing of kinds without a visible source', () => {
    const catalog = createCatalog(registry, { sources: [acme, { id: 'src_x', kind: 'jira', name: 'No plugin for this', config: {} }] });
    expect(names(catalog.entries())).toEqual([
      'flaky.hangs',
      'flaky.not_json',
      'flaky.plain_throw',
      'flaky.returns_date',
      'flaky.returns_nothing',
      'flaky.sync_throw',
      'flaky.tool_error',
      'flaky.waits',
      'github.create_issue@src_acme',
      'github.get_file@src_acme',
      'github.search_issues@src_acme',
    ]);
    expect(catalog.search('post message to channel', 10)).toEqual([]);
    expect(catalog.resolve('slack.post_message', {})).toEqual({
      ok: false,
      error: {
        code: 'unknown_tool',
        message: 'no tool named "slack.post_message" is available in this run; use search_connector_tools to find tools',
        details: { suggestions: [] },
      },
    });
  });

  it('returns entries with description, input schema, effect, connector and source', () => {
    const catalog = createCatalog(registry, { sources: [acme] });
    const [first] = catalog.search('create issue', 1);
    expect(first).toEqual(acmeCreateIssueEntry);
    const [sourceless] = catalog.search('tool_error', 1);
    expect(sourceless).toEqual({
      name: 'flaky.tool_error',
      description: 'The tool_error tool.',
      input_schema: { type: 'object', properties: {}, additionalProperties: false },
      effect: 'read',
      connector: 'flaky',
    });
  });

  it('ranks name matches above description matches, and stems plurals', () => {
    const catalog = createCatalog(registry, { sources: [acme, team] });
    // both names say issue; the shorter description weighs more (BM25 length normalization)
    expect(names(catalog.search('issues', 10))).toEqual(['github.create_issue@src_acme', 'github.search_issues@src_acme']);
    expect(names(catalog.search('search pull requests', 10))).toEqual(['github.search_issues@src_acme']);
    expect(names(catalog.search('post a chat message', 10))).toEqual(['slack.post_message@src_team', 'slack.list_channels@src_team']);
    expect(names(catalog.search('repository file', 10))).toEqual(['github.get_file@src_acme', 'github.create_issue@src_acme', 'github.search_issues@src_acme']);
  });

  it('matches connector kinds, source names and word prefixes', () => {
    const catalog = createCatalog(registry, { sources: [acme, team] });
    expect(names(catalog.search('slack', 10))).toEqual(['slack.list_channels@src_team', 'slack.post_message@src_team']);
    expect(names(catalog.search('acme', 10))).toEqual(['github.create_issue@src_acme', 'github.get_file@src_acme', 'github.search_issues@src_acme']);
    // `chan` is a prefix of the name word `channels` (weighted) and of `channel` in post_message's description
    expect(names(catalog.search('chan', 10))).toEqual(['slack.list_channels@src_team', 'slack.post_message@src_team']);
  });

  it('honours the limit, lists by name for a query without words, and is deterministic on ties', () => {
    const catalog = createCatalog(registry, { sources: [acme, personal] });
    expect(names(catalog.search('github', 2))).toEqual(['github.create_issue@src_acme', 'github.create_issue@src_personal']);
    expect(names(catalog.search('  the  ', 3))).toEqual(['flaky.hangs', 'flaky.not_json', 'flaky.plain_throw']);
    expect(catalog.search('zzzz qqq', 10)).toEqual([]);
    expect(names(catalog.search('github', 100))).toEqual(names(catalog.search('github', 100)));
  });
});

describe('tool catalog: two sources of one kind', () => {
  let catalog: ToolCatalog;
  beforeAll(() => {
    catalog = createCatalog(registryOf(codeHost), { sources: [personal, acme] });
  });

  it('lists the tool once per source, told apart by source id and name', () => {
    expect(catalog.search('search issues', 10).map((entry) => [entry.name, entry.source_id, entry.source_name])).toEqual([
      ['github.search_issues', 'src_acme', 'Acme GitHub'],
      ['github.search_issues', 'src_personal', 'Personal GitHub'],
      ['github.create_issue', 'src_acme', 'Acme GitHub'],
      ['github.create_issue', 'src_personal', 'Personal GitHub'],
    ]);
    expect(names(catalog.search('personal', 10))).toEqual([
      'github.create_issue@src_personal',
      'github.get_file@src_personal',
      'github.search_issues@src_personal',
    ]);
  });

  it('refuses an ambiguous name without source_id, naming the choices', () => {
    expect(catalog.resolve('github.search_issues', { query: 'bug' })).toEqual({
      ok: false,
      error: {
        code: 'ambiguous_tool',
        message: 'github.search_issues is offered by 2 sources; pass source_id to choose one',
        details: { choices: GITHUB_CHOICES },
      },
    });
  });

  it('resolves with a source_id and runs with that source config (schema defaults filled)', async () => {
    const call = resolved(catalog, 'github.search_issues', { query: 'bug' }, 'src_personal');
    expect(call.source).toEqual({ id: 'src_personal', name: 'Personal GitHub' });
    expect(await catalog.run(call, { orgId: 'org_1', signal: new AbortController().signal, actorId: 'usr_1' })).toEqual({
      result: {
        args: { query: 'bug', state: 'open' },
        source: 'src_personal',
        config: { token: 'mine', base_url: 'https://git.example.test/api' },
        org: 'org_1',
        actor: 'usr_1',
      },
    });
    const other = await catalog.run(resolved(catalog, 'github.search_issues', { query: 'bug' }, 'src_acme'), ctx());
    expect(other).toEqual({
      result: {
        args: { query: 'bug', state: 'open' },
        source: 'src_acme',
        config: { token: 'acme-token', base_url: 'https://api.github.com' },
        org: 'org_1',
        actor: null,
      },
    });
  });

  it('refuses a source_id that does not offer the tool', () => {
    expect(catalog.resolve('github.search_issues', { query: 'bug' }, 'src_other')).toEqual({
      ok: false,
      error: {
        code: 'unknown_source',
        message: 'source "src_other" does not offer github.search_issues in this run',
        details: { choices: GITHUB_CHOICES },
      },
    });
  });
});

describe('tool catalog: resolve', () => {
  let catalog: ToolCatalog;
  beforeAll(() => {
    catalog = createCatalog(registryOf(codeHost, failing), { sources: [acme] });
  });

  it('answers unknown_tool with close names', () => {
    expect(catalog.resolve('github.search_issue', {})).toEqual({
      ok: false,
      error: {
        code: 'unknown_tool',
        message: 'no tool named "github.search_issue" is available in this run; did you mean github.search_issues, github.create_issue?',
        details: { suggestions: ['github.search_issues', 'github.create_issue'] },
      },
    });
    const bare = catalog.resolve('search_issues', {});
    expect(bare.ok ? null : bare.error.details).toEqual({ suggestions: ['github.search_issues', 'github.create_issue'] });
  });

  it('lists every failing argument path with its message', () => {
    const resolution = catalog.resolve('github.search_issues', {
      state: 'stale',
      labels: ['', 'ok', 7],
      filters: { author: 'not-an-email', since: 'yesterday', extra: 1 },
      bogus: true,
    });
    expect(resolution.ok).toBe(false);
    if (resolution.ok) return;
    expect(resolution.error.code).toBe('invalid_arguments');
    const issues = resolution.error.details?.['issues'] as { path: string; message: string }[];
    expect([...issues].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))).toEqual([
      { path: 'bogus', message: 'is not an accepted property' },
      { path: 'filters.author', message: 'must match format "email"' },
      { path: 'filters.extra', message: 'is not an accepted property' },
      { path: 'filters.since', message: 'must match format "date-time"' },
      { path: 'labels.0', message: 'must NOT have fewer than 1 characters' },
      { path: 'labels.2', message: 'must be string' },
      { path: 'query', message: 'is required' },
      { path: 'state', message: 'must be one of "open", "closed", "all"' },
    ]);
    expect(resolution.error.message.startsWith('invalid arguments for github.search_issues: ')).toBe(true);
    expect(resolution.error.message).toContain('filters.since must match format "date-time"');
  });

  it('refuses arguments that are not an object, and checks patterns', () => {
    expect(catalog.resolve('github.create_issue', ['a'])).toEqual({
      ok: false,
      error: {
        code: 'invalid_arguments',
        message: 'invalid arguments for github.create_issue: (arguments) must be object',
        details: { issues: [{ path: '', message: 'must be object' }] },
      },
    });
    const pattern = catalog.resolve('github.create_issue', { repo: 'no-slash', title: 'x' });
    expect(pattern.ok ? null : pattern.error.details).toEqual({ issues: [{ path: 'repo', message: 'must match pattern "^[^/]+/[^/]+$"' }] });
  });

  it('fills schema defaults into a copy and leaves the caller arguments untouched', () => {
    const args = { query: 'crash' };
    const call = resolved(catalog, 'github.search_issues', args);
    expect(call).toEqual({
      ok: true,
      tool: catalog.search('search issues', 1)[0],
      effect: 'read',
      args: { query: 'crash', state: 'open' },
      source: { id: 'src_acme', name: 'Acme GitHub' },
    });
    expect(args).toEqual({ query: 'crash' });
  });

  it('treats missing arguments as an empty object and ignores a source_id for a sourceless tool', () => {
    expect(resolved(catalog, 'flaky.tool_error', undefined, 'src_whatever')).toMatchObject({ ok: true, args: {}, source: null });
  });
});

describe('tool catalog: run', () => {
  let catalog: ToolCatalog;
  beforeAll(() => {
    catalog = createCatalog(registryOf(codeHost, failing, counter), {
      sources: [acme, { id: 'src_broken', kind: 'github', name: 'Broken GitHub', config: { token: 42 } }],
    });
  });

  const run = (name: string, signal?: AbortSignal): Promise<ToolOutcome> => catalog.run(resolved(catalog, name, {}), ctx(signal));

  it('turns a ToolError into an error result with its code and details', async () => {
    expect(await run('flaky.tool_error')).toEqual({
      error: { code: 'rate_limited_upstream', message: 'the upstream API said slow down', details: { retry_after_s: 30 } },
    });
  });

  it('turns any other throw, async or sync, into tool_failed', async () => {
    expect(await run('flaky.plain_throw')).toEqual({ error: { code: 'tool_failed', message: "Cannot read properties of undefined (reading 'id')" } });
    expect(await run('flaky.sync_throw')).toEqual({ error: { code: 'tool_failed', message: 'thrown before any promise' } });
  });

  it('returns results as JSON: undefined becomes null, Dates strings, and a non-JSON value fails', async () => {
    expect(await run('flaky.returns_nothing')).toEqual({ result: null });
    expect(await run('flaky.returns_date')).toEqual({ result: { at: '2024-01-02T03:04:05.000Z' } });
    expect(await run('flaky.not_json')).toEqual({
      error: { code: 'tool_failed', message: 'the tool returned a value that is not JSON: Do not know how to serialize a BigInt' },
    });
  });

  it('answers cancelled without running the tool when the signal is already aborted', async () => {
    const before = calls;
    const controller = new AbortController();
    controller.abort();
    expect(await run('counter.bump', controller.signal)).toEqual({ error: { code: 'cancelled', message: 'the run was cancelled before the tool finished' } });
    expect(calls).toBe(before);
    expect(await run('counter.bump')).toEqual({ result: { calls: before + 1 } });
  });

  it('answers cancelled when aborted while the tool runs, whether the tool honours the signal or not', async () => {
    for (const name of ['flaky.waits', 'flaky.hangs']) {
      const controller = new AbortController();
      const pending = run(name, controller.signal);
      controller.abort();
      expect(await pending).toEqual({ error: { code: 'cancelled', message: 'the run was cancelled before the tool finished' } });
    }
  });

  it('refuses to run a tool of a source whose config fails the connector schema', async () => {
    const call = resolved(catalog, 'github.get_file', {}, 'src_broken');
    expect(await catalog.run(call, ctx())).toEqual({
      error: {
        code: 'source_misconfigured',
        message: 'source "Broken GitHub" has a config its connector does not accept; fix the source',
        details: { issues: [{ path: 'token', message: 'must be string' }] },
      },
    });
  });

  it('answers unknown_tool for a resolved call of another catalog', async () => {
    const other = createCatalog(registryOf(chat), { sources: [team] });
    const foreign = resolved(other, 'slack.list_channels', {});
    const outcome = await catalog.run(foreign, ctx());
    expect('error' in outcome ? outcome.error.code : null).toBe('unknown_tool');
  });
});

describe('tool catalog: interceptors', () => {
  it('runs the chain around the tool, outermost first, and lets an interceptor answer without the tool', async () => {
    const seen: string[] = [];
    const audit: ToolInterceptor = async (call, next) => {
      seen.push(`audit>${call.name}:${call.effect}:${call.orgId}`);
      const outcome = await next();
      seen.push(`audit<${JSON.stringify(outcome)}`);
      return outcome;
    };
    const policy: ToolInterceptor = async (call, next) => {
      seen.push(`policy>${call.name}`);
      if (call.effect === 'write') return { error: { code: 'policy_denied', message: 'writes are off' } };
      return next();
    };
    const catalog = createCatalog(registryOf(codeHost), { sources: [acme], interceptors: [audit, policy] });
    expect(await catalog.run(resolved(catalog, 'github.create_issue', { repo: 'a/b', title: 't' }), ctx())).toEqual({
      error: { code: 'policy_denied', message: 'writes are off' },
    });
    const read = await catalog.run(resolved(catalog, 'github.get_file', {}), ctx());
    expect(read).toEqual({ result: { ok: true } });
    expect(seen).toEqual([
      'audit>github.create_issue:write:org_1',
      'policy>github.create_issue',
      'audit<{"error":{"code":"policy_denied","message":"writes are off"}}',
      'audit>github.get_file:read:org_1',
      'policy>github.get_file',
      'audit<{"result":{"ok":true}}',
    ]);
  });

  it('gives interceptors the mapped outcome of a failing tool, and maps an interceptor throw to tool_failed', async () => {
    const outcomes: ToolOutcome[] = [];
    const recorder: ToolInterceptor = async (_call, next) => {
      const outcome = await next();
      outcomes.push(outcome);
      return outcome;
    };
    const exploding: ToolInterceptor = async () => {
      throw new Error('metrics backend down');
    };
    const recorded = createCatalog(registryOf(failing), { interceptors: [recorder] });
    await recorded.run(resolved(recorded, 'flaky.plain_throw', {}), ctx());
    expect(outcomes).toEqual([{ error: { code: 'tool_failed', message: "Cannot read properties of undefined (reading 'id')" } }]);
    const broken = createCatalog(registryOf(failing), { interceptors: [exploding] });
    expect(await broken.run(resolved(broken, 'flaky.returns_nothing', {}), ctx())).toEqual({
      error: { code: 'tool_failed', message: 'metrics backend down' },
    });
  });
});
