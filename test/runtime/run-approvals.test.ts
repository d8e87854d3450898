/**
 * Approvals of agent runs that are neither chat nor task runs: a pipeline's
 * agent run (`POST /pipeline-agent/runs/:agent_run_id/approvals/:approval_id`,
 * the pipeline token or a login token with `pipeline:manage`) and a workflow
 * agent step's run (`POST /orchestrator/workflows/:id/runs/:run_id/steps/:step_id/approvals/:approval_id`,
 * `workflow:manage`). Org-isolated (404), answered once (409), in the activity
 * feed and the notifications like other approvals; the runs are recorded with
 * their kind (`pipeline_agent`, `workflow_step`).
 */
import { describe, expect, it } from 'vitest';
import { startWiredOrg } from '../helpers/llm.js';
import { eventually } from '../helpers/eventually.js';
import { addMember } from '../helpers/members.js';
import { ownLlm, useSuite } from '../helpers/suite.js';
import type { Session } from '../helpers/server.js';
import { agentStep, createWorkflow, ON, runUntil, startRun, stepOf } from '../orchestrator/helpers.js';
import { execute } from './chat-helpers.js';

const ctx = useSuite(async (own) => ownLlm(own, await startWiredOrg(ON)));

const note = (id: string, text: string) => ({ tool_calls: [{ id, ...execute('memory.store', { kind: 'note', realm: 'default', text }) }] });
const memories = async (session: Session) => (await ctx.server.request('GET', '/memory', { token: session.token })).body.total as number;
const inbox = async (session: Session): Promise<any[]> => (await ctx.server.request('GET', '/notifications?limit=200', { token: session.token })).body.items;
const feed = async (session: Session): Promise<any[]> => (await ctx.server.request('GET', '/activity?limit=200', { token: session.token })).body.items;

/** the approval the agent run is waiting for, from its stored transcript */
async function waitingApproval(session: Session, agentRunId: string): Promise<string> {
  const org = session.organization.id as never;
  return eventually(
    async () => {
      const events = await ctx.server.service.services.collections.agentRunEvents.findAll(org, { run_id: agentRunId });
      const run = await ctx.server.service.services.collections.agentRuns.get(org, agentRunId);
      const asked = events.find((event) => event.type === 'approval_required');
      return asked && run?.status === 'awaiting_approval' ? (asked.approval_id as string) : undefined;
    },
    { what: `agent run ${agentRunId} to wait for an approval` },
  );
}

describe('approvals of pipeline agent runs', () => {
  async function pipelineRun() {
    const pipeline = await ctx.server.request('POST', '/pipelines', { token: ctx.owner.token, body: { name: `ap-${Math.random().toString(36).slice(2, 8)}` } });
    const started = await ctx.server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: ctx.owner.token, body: {} });
    return { pipelineId: pipeline.body.id as string, runId: started.body.run.id as string, token: started.body.token as string };
  }

  it('the pipeline token approves a write; the tool runs, the run succeeds; another run, another org and a viewer cannot answer', async () => {
    const first = await pipelineRun();
    const second = await pipelineRun();
    const before = await memories(ctx.owner);
    ctx.llm.script([note('pa1', 'from the pipeline'), { text: 'noted' }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', { token: first.token, body: { instruction: 'note it' } });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    const approvalId = await waitingApproval(ctx.owner, id);
    const path = `/pipeline-agent/runs/${id}/approvals/${approvalId}`;

    expect((await ctx.server.request('POST', path, { token: second.token, body: { approved: true } })).status).toBe(404);
    const stranger = await ctx.server.register('Foreign Approver Org');
    expect((await ctx.server.request('POST', path, { token: stranger.token, body: { approved: true } })).status).toBe(404);
    const viewer = await addMember(ctx.server, ctx.owner, 'viewer');
    expect((await ctx.server.request('POST', path, { token: viewer.token, body: { approved: true } })).status).toBe(403);
    expect((await ctx.server.request('POST', `/pipeline-agent/runs/${id}/approvals/apr_nope`, { token: first.token, body: { approved: true } })).status).toBe(
      404,
    );
    expect((await ctx.server.request('POST', path, { token: first.token, body: { approved: 'yes' } })).status).toBe(400);

    // the approval is in the notifications of the run's user and in the feed
    const notice = await eventually(async () => (await inbox(ctx.owner)).find((entry) => entry.subject?.id === approvalId));
    expect(notice).toMatchObject({ kind: 'approval.requested', details: { tool: 'memory.store', run_kind: 'pipeline_agent', run_id: id } });

    const answer = await ctx.server.request('POST', path, { token: first.token, body: { approved: true } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ approval_id: approvalId, approved: true, decision: 'approved' });
    await eventually(async () =>
      (await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: first.token })).body.status === 'succeeded' ? true : undefined,
    );
    expect(await memories(ctx.owner)).toBe(before + 1);
    expect((await ctx.server.request('POST', path, { token: first.token, body: { approved: false } })).status).toBe(409);
    const decided = await eventually(async () =>
      (await feed(ctx.owner)).find((entry) => entry.kind === 'approval.decided' && entry.subject?.id === approvalId),
    );
    expect(decided).toMatchObject({ details: { decision: 'approved', run_kind: 'pipeline_agent' } });
    const record = await ctx.server.service.services.collections.agentRuns.get(ctx.owner.organization.id as never, id);
    expect(record?.kind).toBe('pipeline_agent');
  });

  it("the owner's login token denies it; the model reads approval_denied", async () => {
    const { token } = await pipelineRun();
    const before = await memories(ctx.owner);
    ctx.llm.script([note('pa2', 'denied'), { text: 'not noted' }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', { token, body: { instruction: 'note it' } });
    const id = started.body.id as string;
    const approvalId = await waitingApproval(ctx.owner, id);
    const answer = await ctx.server.request('POST', `/pipeline-agent/runs/${id}/approvals/${approvalId}`, {
      token: ctx.owner.token,
      body: { approved: false },
    });
    expect(answer.body.decision).toBe('denied');
    await eventually(async () => ((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token })).body.status === 'succeeded' ? true : undefined));
    expect(await memories(ctx.owner)).toBe(before);
  });
});

describe('approvals of workflow agent steps', () => {
  it("a member approves an agent step's write through the workflow run; the step and the run succeed; another org gets 404", async () => {
    const workflow = await createWorkflow(ctx.server, ctx.owner, {
      name: `wf-${Math.random().toString(36).slice(2, 8)}`,
      steps: [agentStep('write', 'note it')],
    });
    const before = await memories(ctx.owner);
    ctx.llm.script([note('wf1', 'from the workflow'), { text: 'noted in the workflow' }]);
    const run = await startRun(ctx.server, ctx.owner, workflow.id);
    const running = await runUntil(ctx.server, ctx.owner, workflow.id, run.id, (body) => stepOf(body, 'write').agent_run_id !== null, 'to start its step');
    const agentRunId = stepOf(running, 'write').agent_run_id as string;
    const approvalId = await waitingApproval(ctx.owner, agentRunId);
    const path = `/orchestrator/workflows/${workflow.id as string}/runs/${run.id as string}/steps/write/approvals/${approvalId}`;

    const stranger = await ctx.server.register('Foreign Workflow Org');
    expect((await ctx.server.request('POST', path, { token: stranger.token, body: { approved: true } })).status).toBe(404);
    const viewer = await addMember(ctx.server, ctx.owner, 'viewer');
    expect((await ctx.server.request('POST', path, { token: viewer.token, body: { approved: true } })).status).toBe(403);
    const otherStep = path.replace('/steps/write/', '/steps/nope/');
    expect((await ctx.server.request('POST', otherStep, { token: ctx.owner.token, body: { approved: true } })).status).toBe(404);

    const notice = await eventually(async () => (await inbox(ctx.owner)).find((entry) => entry.subject?.id === approvalId));
    expect(notice).toMatchObject({ kind: 'approval.requested', details: { run_kind: 'workflow_step', run_id: agentRunId } });

    const member = await addMember(ctx.server, ctx.owner, 'member');
    const answer = await ctx.server.request('POST', path, { token: member.token, body: { approved: true } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ approval_id: approvalId, approved: true, decision: 'approved' });
    const ended = await runUntil(ctx.server, ctx.owner, workflow.id, run.id);
    expect(ended.status).toBe('succeeded');
    expect(stepOf(ended, 'write')).toMatchObject({ status: 'succeeded', output: 'noted in the workflow' });
    expect(await memories(ctx.owner)).toBe(before + 1);
    expect((await ctx.server.request('POST', path, { token: ctx.owner.token, body: { approved: true } })).status).toBe(409);
    const record = await ctx.server.service.services.collections.agentRuns.get(ctx.owner.organization.id as never, agentRunId);
    expect(record?.kind).toBe('workflow_step');
  });
});
