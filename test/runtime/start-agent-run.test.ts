/**
 * The one launcher of agent runs (runtime/agent/start-agent-run.ts), seen from
 * its three sites: chat, tasks and channel bindings.
 * - The cost-cap day is today on the injected clock for every kind: on a
 *   simulated clock, spend before midnight counts for that day and the cap
 *   resets after midnight, for a chat run and a task run alike.
 * - A cancel that arrives while a run is being launched (held here on the
 *   tool listing of an MCP source, an outside system the launch reaches)
 *   ends the run as cancelled before any model call, for all three kinds.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { asOrgId } from '../../runtime/store/types.js';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startFakeMcpHttp, type FakeMcpHttp } from '../fakes/mcp/http-server.js';
import type { Session, TestServer } from '../helpers/server.js';
import { connectChannel, mention, settle, startWorld, waitForText } from '../channels/helpers.js';
import { createTask, runReaches } from '../tasks/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { simulatedClock } from '../helpers/clock.js';
import { startTestServer } from '../helpers/server.js';
import { names, openStream, send, startFakeLlmServer, wireOrganization, type ChatOrg } from './chat-helpers.js';

/** gpt-4o-mini: 0.15 / 0.60 USD per million tokens -> 10k in + 1k out = 0.0021 USD, over a 0.001 cap */
const EXPENSIVE = { input_tokens: 10_000, output_tokens: 1_000 };
const CAP = '0.001';

/**
 * An MCP endpoint in front of the fake MCP server that, once armed, holds
 * each request until released (a slow server), then passes it on.
 */
interface HeldMcp {
  readonly url: string;
  arm(): void;
  /** resolves when a request is being held */
  held(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function startHeldMcp(mcp: FakeMcpHttp): Promise<HeldMcp> {
  let gate: Promise<void> | null = null;
  let open = (): void => {};
  let onHeld: (() => void)[] = [];
  let holding = 0;
  const target = new URL(mcp.url);
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  };
  const server: Server = createServer((req, res) => {
    if (gate === null) return forward(req, res);
    holding += 1;
    for (const listener of onHeld.splice(0)) listener();
    void gate.then(() => forward(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    arm: () => {
      holding = 0;
      gate = new Promise((resolve) => (open = resolve));
    },
    held: () => (holding > 0 ? Promise.resolve() : new Promise((resolve) => onHeld.push(resolve))),
    release: () => {
      gate = null;
      open();
    },
    close: () =>
      new Promise((resolve) => {
        onHeld = [];
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function addMcpSource(server: TestServer, session: Session, url: string, token: string): Promise<string> {
  const created = await server.request('POST', '/sources', {
    token: session.token,
    body: {
      name: `Slow MCP ${Math.random().toString(36).slice(2, 8)}`,
      connector: 'mcp',
      config: { transport: 'http', url, headers: { authorization: `Bearer ${token}` } },
    },
  });
  if (created.status !== 201) throw new Error(`source: ${created.status} ${created.text}`);
  return created.body.id as string;
}

describe('startAgentRun on a simulated clock', () => {
  const clock = simulatedClock('2031-03-04T23:50:00.000Z');
  const ctx = useSuite(async (own) => {
    const llm = own(await startFakeLlmServer());
    const mcp = own(await startFakeMcpHttp());
    const held = own(await startHeldMcp(mcp));
    return { llm, mcp, held, server: own(await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY, CHAT_COST_CAP_USD_PER_DAY: CAP }, { clock })) };
  });

  const chatOnce = async (org: ChatOrg, content: string) => {
    const stream = await send(ctx.server, org, content);
    await stream.ended;
    return stream;
  };

  it('counts a chat run and a task run against the same day, and resets both caps at midnight', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    const task = await createTask(ctx.server, org.session, {
      name: 'capped',
      trigger: { kind: 'webhook' },
      input: { instruction: 'go' },
      cost_cap_usd_per_day: Number(CAP),
    });
    const runTask = async (): Promise<any> => {
      const fire = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token });
      expect(fire.status, fire.text).toBe(202);
      return eventually(
        async () => {
          const run = await ctx.server.request('GET', `/tasks/${task.id}/runs/${fire.body.run_id}`, { token: org.session.token });
          return ['succeeded', 'failed', 'cancelled'].includes(run.body?.status) ? run.body : undefined;
        },
        { what: 'the task run to end' },
      );
    };

    // 23:50: one expensive run of each kind crosses its cap
    ctx.llm.script([
      { text: 'pricey', usage: EXPENSIVE },
      { text: 'pricey too', usage: EXPENSIVE },
    ]);
    const firstChat = await chatOnce(org, 'spend');
    expect(firstChat.events.find((event) => event.event === 'error')?.data.code).toBe('cost_cap_exceeded');
    expect(await runTask()).toMatchObject({ status: 'failed', reason: 'cost_cap_exceeded' });

    // 23:59: still the same day on the runtime clock: both are refused before any model call
    clock.set(Date.parse('2031-03-04T23:59:00.000Z'));
    const requests = ctx.llm.requests.length;
    const refusedChat = await chatOnce(org, 'again');
    expect(names(refusedChat.events)).toEqual(['message_start', 'error', 'message_end']);
    expect(refusedChat.events[1]?.data.code).toBe('cost_cap_exceeded');
    expect(await runTask()).toMatchObject({ status: 'failed', reason: 'cost_cap_exceeded' });
    expect(ctx.llm.requests.length).toBe(requests);

    // 00:01 the next day: yesterday's spend no longer counts, for either kind
    clock.set(Date.parse('2031-03-05T00:01:00.000Z'));
    ctx.llm.script([{ text: 'fresh day' }, { text: 'fresh task' }]);
    const nextDayChat = await chatOnce(org, 'good morning');
    expect(names(nextDayChat.events)).toEqual(['message_start', 'content_delta', 'message_end']);
    expect(nextDayChat.events.at(-1)?.data.finish_reason).toBe('end_turn');
    expect(await runTask()).toMatchObject({ status: 'succeeded' });
    expect(ctx.llm.requests.length).toBe(requests + 2);
  });

  it('cancels a chat reply while its run is being launched: the reply ends cancelled, no model call', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    await addMcpSource(ctx.server, org.session, ctx.held.url, ctx.mcp.token);
    ctx.held.arm();
    const requests = ctx.llm.requests.length;
    // the answer's headers come once the run has started: keep the stream pending
    const streaming = openStream(ctx.server.url, 'POST', `/chat/conversations/${org.conversationId}/messages`, {
      token: org.session.token,
      body: { content: 'hello' },
    });
    await ctx.held.held();
    const conversation = await ctx.server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token });
    const reply = (conversation.body.messages as any[]).find((message) => message.role === 'assistant');
    expect(reply).toMatchObject({ status: 'streaming' });
    const cancel = await ctx.server.request('POST', `/chat/conversations/${org.conversationId}/messages/${reply.id}/cancel`, { token: org.session.token });
    expect(cancel.status, cancel.text).toBe(202);
    expect(cancel.body).toEqual({ message_id: reply.id, run_id: reply.run_id, status: 'cancelling' });
    ctx.held.release();
    const stream = await streaming;
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'message_end']);
    expect(stream.events.at(-1)?.data.finish_reason).toBe('cancelled');
    const after = await eventually(
      async () => {
        const read = await ctx.server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token });
        const message = (read.body.messages as any[]).find((entry) => entry.id === reply.id);
        return message?.status === 'streaming' ? undefined : message;
      },
      { what: 'the reply to end' },
    );
    expect(after).toMatchObject({ status: 'cancelled', content: '' });
    expect(ctx.llm.requests.length).toBe(requests);
    // the conversation is free again
    ctx.llm.script([{ text: 'answered' }]);
    expect((await chatOnce(org, 'once more')).events.at(-1)?.data.finish_reason).toBe('end_turn');
  });

  it('cancels a task run while it is being launched: the run ends cancelled, no model call', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    const source = await addMcpSource(ctx.server, org.session, ctx.held.url, ctx.mcp.token);
    const task = await createTask(ctx.server, org.session, {
      name: 'slow tools',
      trigger: { kind: 'webhook' },
      input: { instruction: 'go' },
      enabled_source_ids: [source],
    });
    ctx.held.arm();
    const requests = ctx.llm.requests.length;
    const fire = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token });
    expect(fire.status, fire.text).toBe(202);
    await ctx.held.held();
    const cancel = await ctx.server.request('POST', `/tasks/${task.id}/runs/${fire.body.run_id}/cancel`, { token: org.session.token });
    expect(cancel.status, cancel.text).toBe(202);
    expect(cancel.body).toEqual({ run_id: fire.body.run_id, status: 'cancelling' });
    ctx.held.release();
    const run = await runReaches(ctx.server, org.session, task.id, fire.body.run_id, 'cancelled');
    expect(run.reason).toBe('cancelled');
    expect(ctx.llm.requests.length).toBe(requests);
  });
});

describe('startAgentRun from a channel binding', () => {
  const ctx = useSuite(async (own) => {
    const world = own(await startWorld());
    const mcp = own(await startFakeMcpHttp());
    return { world, mcp, held: own(await startHeldMcp(mcp)) };
  });

  it('cancels a binding run while it is being launched: the thread is told, no model call', async () => {
    const { server, slack, llm } = ctx.world;
    const session = await server.register();
    const source = await addMcpSource(server, session, ctx.held.url, ctx.mcp.token);
    const connected = await connectChannel(ctx.world, { session, channel: { source_ids: [source] } });
    ctx.held.arm();
    const requests = llm.requests.length;
    await slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(slack, 'is the api up?') });
    await ctx.held.held();
    const { launcher } = server.service.services;
    const org = asOrgId(connected.session.organization.id);
    const [runId] = launcher.inLaunch(org);
    expect(runId).toMatch(/^run_/);
    // another organization cannot reach it
    expect(launcher.cancel(asOrgId('org_someone_else'), runId ?? '')).toBe(false);
    expect(launcher.cancel(org, runId ?? '')).toBe(true);
    ctx.held.release();
    await waitForText(slack, 'C0OPS0001', 'The answer was cancelled.');
    await settle(ctx.world);
    expect(llm.requests.length).toBe(requests);
    expect(launcher.inLaunch(org)).toEqual([]);
  });
});
