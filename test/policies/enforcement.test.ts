/**
 * Policy enforcement on tool calls (feature on): chat runs through the fake
 * LLM and the /mcp server, deny vs allow vs default, fail closed, the
 * decision log, and search hiding the tools a policy always denies.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { execute, send, startFakeLlmServer, wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { createTask, runReaches } from '../tasks/helpers.js';

const READ_ONLY = 'package service.read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "read-only"\n}\n';
const ALLOW_RECALL = 'package service.recall_only\n\ndefault allow := false\n\nallow if input.resource.tool == "memory.recall"\n';
// to_number fails on a non-number; enforcement evaluates with strict built-in errors, so the call fails closed
const STRICT_FAILS = 'package service.numbers\n\ndeny contains msg if {\n  to_number(input.resource.args.text) > 100\n  msg := "too big"\n}\n';

const STORE = { kind: 'note', realm: 'default', text: 'deploys on Tuesday' };

describe('policy enforcement on tool calls', () => {
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => ({ server, llm } = await startLlmServer({ SERVICE_FEATURES_POLICIES: 'true' })));
  afterAll(async () => stopLlmServer({ server, llm }));

  const addPolicy = async (org: ChatOrg, name: string, rego: string): Promise<string> => {
    const created = await server.request('POST', '/policies', { token: org.session.token, body: { name, rego_code: rego } });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };
  /** one reply whose model makes `calls`; the tool results by call id, and whether an approval was asked */
  const reply = async (org: ChatOrg, calls: { id: string; name: string; arguments: Record<string, unknown> }[]) => {
    llm.script([{ tool_calls: calls }, { text: 'done' }]);
    const stream = await send(server, org, 'go');
    await stream.ended;
    const results = new Map<string, any>(
      stream.events.filter((event) => event.event === 'tool_result').map((event) => [event.data.tool_call_id, event.data.result]),
    );
    return { results, asked: stream.events.some((event) => event.event === 'approval_required'), runId: stream.headers.get('x-run-id') as string };
  };
  const decisions = (org: ChatOrg, query = '') => server.request('GET', `/policies/decisions${query}`, { token: org.session.token });

  it('a deny rule refuses writes before the approval gate, lets reads through, and logs each decision', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'ask' });
    await addPolicy(org, 'read_only', READ_ONLY);
    const { results, asked, runId } = await reply(org, [
      { id: 'c_read', ...execute('memory.recall', { query: 'deploys' }) },
      { id: 'c_write', ...execute('memory.store', STORE) },
    ]);
    expect(asked).toBe(false);
    expect(results.get('c_read')).toHaveProperty('result');
    expect(results.get('c_write').error).toMatchObject({ code: 'policy_denied', details: { messages: ['read-only'] } });
    expect(results.get('c_write').error.message).toContain('read-only');
    // nothing was stored
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.items).toEqual([]);

    const log = await eventually(
      async () => {
        const answer = await decisions(org);
        return answer.body.items.length === 2 ? answer.body.items : undefined;
      },
      { what: 'two decisions' },
    );
    expect(log.map((entry: any) => [entry.input.resource.tool, entry.result])).toEqual([
      ['memory.recall', 'allow'],
      ['memory.store', 'deny'],
    ]);
    expect(log[1]).toMatchObject({
      run_id: runId,
      messages: ['read-only'],
      error: null,
      input: { action: 'write', subject: { task: null, binding: null, user: org.session.user.id }, resource: { connector: 'memory', tool_effect: 'write' } },
    });
    expect(log[1].revision).toMatch(/^[0-9a-f]{16}$/);
    expect(results.get('c_write').error.details.decision_id).toBe(log[1].id);
    const denies = await decisions(org, '?result=deny');
    expect(denies.body.items.map((entry: any) => entry.id)).toEqual([log[1].id]);
    // another organization's log is its own
    const other = await wireOrganization(server, llm);
    expect((await decisions(other)).body.items).toEqual([]);
  });

  it("the spec's deny[msg] form (an object in Rego v1) denies with its messages", async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    await addPolicy(
      org,
      'spec_style',
      'package service.spec_style\n\ndeny[msg] {\n  input.action == "write"\n  msg := sprintf("no writes with %s", [input.resource.tool])\n}\n',
    );
    const { results } = await reply(org, [
      { id: 'c_read', ...execute('memory.recall', { query: 'x' }) },
      { id: 'c_write', ...execute('memory.store', STORE) },
    ]);
    expect(results.get('c_read')).toHaveProperty('result');
    expect(results.get('c_write').error).toMatchObject({ code: 'policy_denied', details: { messages: ['no writes with memory.store'] } });
  });

  it('search_connector_tools does not offer the tools every call of which is denied', async () => {
    const org = await wireOrganization(server, llm);
    await addPolicy(org, 'read_only', READ_ONLY);
    const { results } = await reply(org, [{ id: 'c_search', name: 'search_connector_tools', arguments: { query: 'memory' } }]);
    const names = (results.get('c_search').result.tools as { name: string; effect: string }[]).map((tool) => tool.name);
    expect(names).toContain('memory.recall');
    expect(names).not.toContain('memory.store');
  });

  it('a policy that defines allow denies unless allow is true; disabling it lifts the rule at once', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    const id = await addPolicy(org, 'recall_only', ALLOW_RECALL);
    const first = await reply(org, [
      { id: 'c_read', ...execute('memory.recall', { query: 'x' }) },
      { id: 'c_write', ...execute('memory.store', STORE) },
    ]);
    expect(first.results.get('c_read')).toHaveProperty('result');
    expect(first.results.get('c_write').error).toMatchObject({ code: 'policy_denied', details: { messages: ['not allowed by policy recall_only'] } });

    expect((await server.request('PATCH', `/policies/${id}`, { token: org.session.token, body: { enabled: false } })).status).toBe(200);
    const second = await reply(org, [{ id: 'c_write', ...execute('memory.store', STORE) }]);
    expect(second.results.get('c_write')).toHaveProperty('result');
    const log = await eventually(
      async () => {
        const answer = await decisions(org);
        return answer.body.items.length === 3 ? answer.body.items : undefined;
      },
      { what: 'three decisions' },
    );
    // the bundle changed: the last decision names another revision ('empty': no enabled policy)
    expect(log[2]).toMatchObject({ result: 'allow', revision: 'empty' });
    expect(log[0].revision).not.toBe('empty');
  });

  it('an evaluation error denies the call (fail closed) and is logged with its code', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    await addPolicy(org, 'numbers', STRICT_FAILS);
    const { results } = await reply(org, [
      { id: 'c_small', ...execute('memory.store', { ...STORE, text: '5' }) },
      { id: 'c_bad', ...execute('memory.store', STORE) },
    ]);
    expect(results.get('c_small')).toHaveProperty('result');
    expect(results.get('c_bad').error.code).toBe('policy_denied');
    const denied = await eventually(
      async () => {
        const answer = await decisions(org, '?result=deny');
        return answer.body.items.length === 1 ? answer.body.items[0] : undefined;
      },
      { what: 'the denial' },
    );
    expect(denied.error.code).toBe('eval_builtin_error');
  });

  it('a task run records its decisions as policy_audit entries on the run', async () => {
    const org = await wireOrganization(server, llm);
    await addPolicy(org, 'read_only', READ_ONLY);
    const task = await createTask(server, org.session, {
      name: 'notes',
      trigger: { kind: 'webhook' },
      input_template: { instruction: 'take notes' },
      approval_defaults: { write: 'allow' },
    });
    llm.script([
      {
        tool_calls: [
          { id: 'c_read', ...execute('memory.recall', { query: 'x' }) },
          { id: 'c_write', ...execute('memory.store', STORE) },
        ],
      },
      { text: 'done' },
    ]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token, body: {} });
    expect(fire.status, fire.text).toBe(202);
    const run = await runReaches(server, org.session, task.id, fire.body.run_id, 'succeeded');
    const audit = (run.policy_audit as any[]).filter((entry) => entry.type === 'policy_decision');
    expect(audit.map((entry) => [entry.tool, entry.result, entry.messages])).toEqual([
      ['memory.recall', 'allow', []],
      ['memory.store', 'deny', ['read-only']],
    ]);
    const log = (await decisions(org)).body.items as any[];
    expect(audit.map((entry) => entry.decision_id)).toEqual(log.map((entry) => entry.id));
    expect(log[1].input.subject.task).toBe(task.id);
    expect(log[1].run_id).toBe(fire.body.run_id);
  });

  it('the /mcp server path: a denied write answers policy_denied without asking for an approval; reads run', async () => {
    const org = await wireOrganization(server, llm);
    await addPolicy(org, 'read_only', READ_ONLY);
    const key = await server.request('POST', '/api-keys', { token: org.session.token, body: { name: 'ide', permissions: ['chat:use'] } });
    expect(key.status, key.text).toBe(201);
    const client = new Client({ name: 'test-ide', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key.body.key}` } } }),
    );
    try {
      const call = async (tool: string, args: Record<string, unknown>) =>
        ((await client.callTool({ name: 'execute_connector_tool', arguments: { tool, arguments: args } })) as { structuredContent: any }).structuredContent;
      const write = await call('memory.store', STORE);
      expect(write.error).toMatchObject({ code: 'policy_denied', details: { messages: ['read-only'] } });
      const read = await call('memory.recall', { query: 'x' });
      expect(read).toHaveProperty('result');
      const search = ((await client.callTool({ name: 'search_connector_tools', arguments: { query: 'memory' } })) as { structuredContent: any })
        .structuredContent;
      const offered = (search.result.tools as { name: string }[]).map((tool) => tool.name);
      expect(offered).toContain('memory.recall');
      expect(offered).not.toContain('memory.store');
      const approvals = await server.request('GET', '/mcp/approvals', { token: org.session.token });
      expect(approvals.body.items).toEqual([]);
      const log = (await decisions(org)).body.items;
      expect(log.map((entry: any) => [entry.input.resource.tool, entry.result, entry.run_id])).toEqual([
        ['memory.store', 'deny', null],
        ['memory.recall', 'allow', null],
      ]);
    } finally {
      await client.close();
    }
  });
});

describe('policy enforcement with the feature off', () => {
  it('evaluates nothing: no decision is made and writes run', async () => {
    const llm = await startFakeLlmServer();
    const server = await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY });
    try {
      const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
      llm.script([{ tool_calls: [{ id: 'c_write', ...execute('memory.store', STORE) }] }, { text: 'done' }]);
      const stream = await send(server, org, 'go');
      await stream.ended;
      const result = stream.events.find((event) => event.event === 'tool_result');
      expect(result?.data.result).toHaveProperty('result');
      expect((await server.request('GET', '/policies/decisions', { token: org.session.token })).body.error.code).toBe('feature_disabled');
    } finally {
      await server.stop();
      await llm.close();
    }
  });
});
