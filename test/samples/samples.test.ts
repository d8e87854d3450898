/** /webhook-samples: built-in payloads of real senders, saved samples per organization, firing into a task. */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const require = createRequire(import.meta.url);

describe('webhook samples', () => {
  const ctx = useOneOrg();

  it('lists the built-in samples with real sender payloads', async () => {
    const list = await ctx.server.request('GET', '/webhook-samples', { token: ctx.owner.token });
    expect(list.status).toBe(200);
    const names = list.body.items.map((item: any) => item.name);
    expect(names).toEqual(['github.push', 'github.pull_request.opened', 'jenkins.build_failed', 'vercel.deployment_error']);
    expect(list.body).toMatchObject({ next_cursor: null, total: 4 });
    const byName = Object.fromEntries(list.body.items.map((item: any) => [item.name, item]));

    // the code-host samples are the examples @octokit/webhooks-examples ships, unchanged
    const definitions = require('@octokit/webhooks-examples') as { name: string; examples: any[] }[];
    const pushExamples = definitions.find((definition) => definition.name === 'push')!.examples;
    expect(pushExamples).toContainEqual(byName['github.push'].body);
    expect(byName['github.push'].body.ref).toMatch(/^refs\/heads\//);
    expect(byName['github.push'].body.commits.length).toBeGreaterThan(0);
    expect(byName['github.push'].headers['x-github-event']).toBe('push');
    const pr = byName['github.pull_request.opened'];
    expect(pr.body).toMatchObject({ action: 'opened', pull_request: { state: 'open' } });
    expect(definitions.find((definition) => definition.name === 'pull_request')!.examples).toContainEqual(pr.body);

    expect(byName['jenkins.build_failed'].body).toMatchObject({
      name: expect.any(String),
      build: { phase: 'COMPLETED', status: 'FAILURE', scm: { commit: expect.stringMatching(/^[0-9a-f]{40}$/) } },
    });
    expect(byName['vercel.deployment_error'].body).toMatchObject({
      type: 'deployment.error',
      payload: { deployment: { id: expect.stringMatching(/^dpl_/) }, target: 'production' },
    });
    for (const item of list.body.items) expect(item).toMatchObject({ builtin: true, id: null });
  });

  it('saves a custom sample per organization until deleted', async () => {
    const saved = await ctx.server.request('POST', '/webhook-samples', {
      token: ctx.owner.token,
      body: {
        name: 'grafana.alert',
        description: 'a firing alert',
        body: { status: 'firing', alerts: [{ labels: { alertname: 'HighLatency' } }] },
        headers: { 'X-Grafana-Org': '1' },
      },
    });
    expectStatus(saved, 201).toMatchObject({ name: 'grafana.alert', builtin: false, headers: { 'x-grafana-org': '1' } });
    const list = await ctx.server.request('GET', '/webhook-samples', { token: ctx.owner.token });
    expect(list.body.total).toBe(5);
    expect(list.body.items.at(-1)).toMatchObject({ name: 'grafana.alert', body: { status: 'firing' } });

    // another organization does not see it, and may use the same name
    const other = await ctx.server.register();
    const theirs = await ctx.server.request('GET', '/webhook-samples', { token: other.token });
    expect(theirs.body.items.map((item: any) => item.name)).not.toContain('grafana.alert');
    expect((await ctx.server.request('DELETE', '/webhook-samples/grafana.alert', { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('POST', '/webhook-samples/grafana.alert/run', { token: other.token, body: { task_id: 'tsk_x' } })).status).toBe(404);
    expect((await ctx.server.request('POST', '/webhook-samples', { token: other.token, body: { name: 'grafana.alert', body: {} } })).status).toBe(201);

    const duplicate = await ctx.server.request('POST', '/webhook-samples', { token: ctx.owner.token, body: { name: 'grafana.alert', body: {} } });
    expect(duplicate.status).toBe(409);
    const builtinName = await ctx.server.request('POST', '/webhook-samples', { token: ctx.owner.token, body: { name: 'github.push', body: {} } });
    expectError(builtinName, 409, 'conflict');

    expect((await ctx.server.request('DELETE', '/webhook-samples/grafana.alert', { token: ctx.owner.token })).status).toBe(204);
    expect((await ctx.server.request('DELETE', '/webhook-samples/grafana.alert', { token: ctx.owner.token })).status).toBe(404);
    expect((await ctx.server.request('GET', '/webhook-samples', { token: ctx.owner.token })).body.total).toBe(4);
    const builtinDelete = await ctx.server.request('DELETE', '/webhook-samples/github.push', { token: ctx.owner.token });
    expect(builtinDelete.status).toBe(409);
  });

  it('run: an unknown sample or task is 404', async () => {
    const unknownSample = await ctx.server.request('POST', '/webhook-samples/nope/run', { token: ctx.owner.token, body: { task_id: 'tsk_missing' } });
    expect(unknownSample.status).toBe(404);
    expect(unknownSample.body.error.message).toContain('sample nope');
    const unknownTask = await ctx.server.request('POST', '/webhook-samples/github.push/run', { token: ctx.owner.token, body: { task_id: 'tsk_missing' } });
    expectError(unknownTask, 404, 'not_found');
  });

  it('answers every validation error with 400', async () => {
    const bad: [string, string, unknown][] = [
      ['POST', '/webhook-samples', {}],
      ['POST', '/webhook-samples', { name: 'x' }],
      ['POST', '/webhook-samples', { name: 'x', body: [1, 2] }],
      ['POST', '/webhook-samples', { name: 'x', body: 'text' }],
      ['POST', '/webhook-samples', { name: 'Upper', body: {} }],
      ['POST', '/webhook-samples', { name: '', body: {} }],
      ['POST', '/webhook-samples', { name: 'x', body: {}, headers: { 'bad header': 'v' } }],
      ['POST', '/webhook-samples', { name: 'x', body: {}, headers: { a: 1 } }],
      ['POST', '/webhook-samples', { name: 'x', body: {}, extra: true }],
      ['POST', '/webhook-samples/github.push/run', {}],
      ['POST', '/webhook-samples/github.push/run', { task_id: '' }],
      ['POST', '/webhook-samples/github.push/run', { task_id: 'tsk_1', extra: 1 }],
    ];
    for (const [method, path, body] of bad) {
      const answer = await ctx.server.request(method, path, { token: ctx.owner.token, body });
      expect({ path, body, status: answer.status, code: answer.body?.error?.code }).toEqual({ path, body, status: 400, code: 'validation_error' });
    }
  });

  it('needs webhook:manage to save and task:manage to run', async () => {
    const viewer = await addMember(ctx.server, ctx.owner, 'viewer');
    expect((await ctx.server.request('GET', '/webhook-samples', { token: viewer.token })).status).toBe(200);
    expect((await ctx.server.request('POST', '/webhook-samples', { token: viewer.token, body: { name: 'v', body: {} } })).status).toBe(403);
    expect((await ctx.server.request('POST', '/webhook-samples/github.push/run', { token: viewer.token, body: { task_id: 't' } })).status).toBe(403);
  });
});
