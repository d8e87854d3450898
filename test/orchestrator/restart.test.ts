/** A workflow run survives a restart: the next process resumes it from its stored step states (mid-step, fanned out, or waiting at an approval step). */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer } from '../fakes/llm/server.js';
import { wireOrganization } from '../runtime/chat-helpers.js';
import { signIn, startTestServer, type TestServer } from '../helpers/server.js';
import { agentStep, createWorkflow, ON, runUntil, startRun, stepOf, userTexts } from './helpers.js';

/**
 * Servers started one after another on one data folder with one root secret
 * (tokens and the organization's sealed LLM key stay readable across them),
 * all stopped and the folder removed after the suite.
 */
function restartable(prefix: string): { start: () => Promise<TestServer> } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const env = { ...ON, JWT_SECRET: randomBytes(32).toString('hex'), LLM_API_KEY: FAKE_LLM_API_KEY, SHUTDOWN_GRACE_SECS: '0' };
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    start: async () => {
      const server = await startTestServer(env, { dataDir });
      servers.push(server);
      return server;
    },
  };
}

describe('workflow runs across a restart', () => {
  const servers = restartable('svc-orchestrator-restart-');

  it('a run stopped mid-step restarts the interrupted step and runs to completion', async () => {
    const llm = await startFakeLlmServer();
    try {
      const first = await servers.start();
      const org = await wireOrganization(first, llm);
      const owner = org.session;
      llm.script([{ text: 'first-done' }, { text: ['never', 'finished'], hold_after_chunks: 1 }]);
      const workflow = await createWorkflow(first, owner, {
        name: 'survivor',
        steps: [
          agentStep('one', 'step one'),
          agentStep('two', 'step two after {{steps.one.output}}', { needs: ['one'] }),
          agentStep('three', 'step three', { needs: ['two'] }),
        ],
      });
      const started = await startRun(first, owner, workflow.id);
      await llm.whenHeld();
      const before = await runUntil(first, owner, workflow.id, started.id, (run) => stepOf(run, 'two').status === 'running', 'to run step two');
      const interrupted = stepOf(before, 'two').agent_run_id as string;
      await first.stop();
      llm.release();

      llm.script([{ text: 'second-try' }, { text: 'third-done' }]);
      const second = await servers.start();
      const session = await signIn(second, owner);
      const run = await runUntil(second, session, workflow.id, started.id);
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'one')).toMatchObject({ status: 'succeeded', output: 'first-done', attempts: 1 });
      expect(stepOf(run, 'two')).toMatchObject({ status: 'succeeded', output: 'second-try', attempts: 2 });
      expect(stepOf(run, 'two').agent_run_id).not.toBe(interrupted);
      expect(stepOf(run, 'three')).toMatchObject({ status: 'succeeded', output: 'third-done' });
      // the restarted step got its rendered instruction again
      const texts = llm.requests.map((request) => userTexts(request.body));
      expect(texts.filter((text) => text.includes('step two after first-done'))).toHaveLength(2);
      const old = await second.service.services.collections.agentRuns.get(owner.organization.id as never, interrupted);
      expect(old).toMatchObject({ status: 'failed', reason: 'interrupted' });
    } finally {
      await llm.close();
    }
  });
});

describe('a workflow run waiting at an approval step across a restart', () => {
  const servers = restartable('svc-orchestrator-approval-restart-');

  it('still waits after the restart; approved then, it runs the next step with the comment; a second run waiting is cancelled after it', async () => {
    const llm = await startFakeLlmServer();
    try {
      const first = await servers.start();
      const org = await wireOrganization(first, llm);
      const owner = org.session;
      const workflow = await createWorkflow(first, owner, {
        name: 'gated',
        steps: [{ id: 'gate', kind: 'approval', message: 'Ship it?' }, agentStep('work', 'work: {{steps.gate.output.comment}}', { needs: ['gate'] })],
      });
      const approving = await startRun(first, owner, workflow.id);
      const cancelling = await startRun(first, owner, workflow.id);
      expect([approving.status, cancelling.status]).toEqual(['waiting_approval', 'waiting_approval']);
      await first.stop();

      llm.script([{ text: 'shipped' }]);
      const second = await servers.start();
      const session = await signIn(second, owner);
      const path = (run: { id: string }) => `/orchestrator/workflows/${workflow.id}/runs/${run.id}`;
      const waiting = await second.request('GET', path(approving), { token: session.token });
      expect(waiting.body.status).toBe('waiting_approval');
      expect(stepOf(waiting.body, 'gate')).toMatchObject({ status: 'waiting_approval' });
      expect(stepOf(waiting.body, 'work')).toMatchObject({ status: 'pending' });
      expect(llm.requests).toHaveLength(0);

      const approved = await second.request('POST', `${path(approving)}/approvals/gate`, {
        token: session.token,
        body: { approved: true, comment: 'after the restart' },
      });
      expect(approved.status).toBe(200);
      const done = await runUntil(second, session, workflow.id, approving.id);
      expect(done.status).toBe('succeeded');
      expect(stepOf(done, 'work')).toMatchObject({ status: 'succeeded', output: 'shipped' });
      expect(userTexts(llm.requests[0]!.body)).toContain('work: after the restart');

      const cancelled = await second.request('POST', `${path(cancelling)}/cancel`, { token: session.token });
      expect(cancelled.status).toBe(200);
      const ended = await runUntil(second, session, workflow.id, cancelling.id);
      expect(ended).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
      expect(stepOf(ended, 'gate').status).toBe('cancelled');
      expect(stepOf(ended, 'work').status).toBe('cancelled');
      const late = await second.request('POST', `${path(cancelling)}/approvals/gate`, { token: session.token, body: { approved: true } });
      expect(late.status).toBe(409);
      expect(llm.requests).toHaveLength(1);
    } finally {
      await llm.close();
    }
  });
});

describe('a fanned-out workflow run across a restart', () => {
  const servers = restartable('svc-orchestrator-fanout-restart-');

  it('keeps the branch that finished, runs the interrupted one again, and joins once', async () => {
    const llm = await startFakeLlmServer();
    try {
      const first = await servers.start();
      const org = await wireOrganization(first, llm);
      const owner = org.session;
      // A, then B and C at once (whichever asks first finishes, the other is held), then D joining both
      llm.script([{ text: 'a-done' }, { text: 'branch-done' }, { text: ['never', 'finished'], hold_after_chunks: 1 }]);
      const workflow = await createWorkflow(first, owner, {
        name: 'fan',
        steps: [
          agentStep('a', 'step a'),
          agentStep('b', 'step b', { needs: ['a'] }),
          agentStep('c', 'step c', { needs: ['a'] }),
          agentStep('d', 'join {{steps.b.output}} + {{steps.c.output}}', { needs: ['b', 'c'] }),
        ],
      });
      const started = await startRun(first, owner, workflow.id);
      await llm.whenHeld();
      const before = await runUntil(
        first,
        owner,
        workflow.id,
        started.id,
        (run) => ['b', 'c'].some((id) => stepOf(run, id).status === 'succeeded'),
        'to finish one branch',
      );
      const [doneId, heldId] = stepOf(before, 'b').status === 'succeeded' ? ['b', 'c'] : ['c', 'b'];
      expect(stepOf(before, heldId).status).toBe('running');
      await first.stop();
      llm.release();

      llm.script([{ text: 'again-done' }, { text: 'joined' }]);
      const second = await servers.start();
      const run = await runUntil(second, await signIn(second, owner), workflow.id, started.id);
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'a')).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(stepOf(run, doneId)).toMatchObject({ status: 'succeeded', output: 'branch-done', attempts: 1 });
      expect(stepOf(run, heldId)).toMatchObject({ status: 'succeeded', output: 'again-done', attempts: 2 });
      expect(stepOf(run, 'd')).toMatchObject({ status: 'succeeded', output: 'joined', attempts: 1 });
      const joins = llm.requests.map((request) => userTexts(request.body)).filter((text) => text.includes('join '));
      expect(joins).toHaveLength(1);
      expect(joins[0]).toContain(doneId === 'b' ? 'join branch-done + again-done' : 'join again-done + branch-done');
    } finally {
      await llm.close();
    }
  });
});
