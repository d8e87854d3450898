/**
 * Input templates' indexed paths: the spec's `field[index]` form (and
 * Handlebars' own `.[index]`) saved and rendered through a task fire; bad
 * forms refused at save with a 400 naming the key.
 */
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { createTask } from './helpers.js';
import { expectError } from '../helpers/expect-status.js';

const BODY = {
  commits: [
    { id: 'c0ffee1', message: 'fix: retry', files: ['a.ts', 'b.ts'] },
    { id: 'deadbee', message: 'docs', files: ['README.md'] },
  ],
  a: [{ b: [10, 11] }, { b: [20] }],
  matrix: [['x1', 'x2'], ['y1']],
  labels: { 'needs-review': true },
};

describe('input template indexed paths', () => {
  const ctx = useSuite(async (own) => {
    // no LLM key: runs end at once; the rendered input is stored with the run all the same
    const { server, owner } = ownOrgs(own, await oneOrg());
    return { owner, server };
  });

  /** saves a task with the template, fires it with BODY, returns the rendered input */
  const render = async (template: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const task = await createTask(ctx.server, ctx.owner, { name: `t-${Math.random()}`, trigger: { kind: 'webhook' }, input_template: template });
    expect(task.input_template).toEqual(template);
    const fired = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: ctx.owner.token, body: { body: BODY } });
    expect(fired.status).toBe(202);
    const run = await ctx.server.request('GET', `/tasks/${task.id}/runs/${fired.body.run_id}`, { token: ctx.owner.token });
    return run.body.input;
  };

  it('renders field[index] paths, nested, chained and inside each', async () => {
    const input = await render({
      instruction: 'Commit {{trigger.body.commits[0].id}}: {{trigger.body.commits[0].message}}',
      nested: '{{trigger.body.a[0].b[1]}} {{trigger.body.a[1].b[0]}}',
      chained: '{{trigger.body.matrix[0][1]}}',
      second_file: '{{trigger.body.commits[0].files[1]}}',
      each: '{{#each trigger.body.matrix}}{{this[0]}};{{/each}}',
      handlebars_form: '{{trigger.body.commits.[1].id}} {{trigger.body.labels.[needs-review]}}',
      in_lookup: '{{lookup trigger.body.commits[1] "message"}}',
      in_if: '{{#if trigger.body.commits[1]}}two{{else}}one{{/if}}',
    });
    expect(input).toEqual({
      instruction: 'Commit c0ffee1: fix: retry',
      nested: '11 20',
      chained: 'x2',
      second_file: 'b.ts',
      each: 'x1;y1;',
      handlebars_form: 'deadbee true',
      in_lookup: 'docs',
      in_if: 'two',
    });
  });

  it('renders an index past the end, or on a missing field, as empty', async () => {
    const input = await render({ instruction: '[{{trigger.body.commits[5].id}}][{{trigger.body.nothing[0]}}][{{trigger.body.a[0].b[9]}}]' });
    expect(input['instruction']).toBe('[][][]');
  });

  it('refuses bad indexed forms at save with a 400 naming the key', async () => {
    const cases: [string, string][] = [
      ['{{trigger.body.commits[}}', 'Parse error'],
      ['{{trigger.body.commits[x]}}', 'an index is a non-negative integer'],
      ['{{trigger.body.commits[-1]}}', 'an index is a non-negative integer'],
      ['{{trigger.body.commits[0}}', 'Parse error'],
    ];
    for (const [template, message] of cases) {
      const response = await ctx.server.request('POST', '/tasks', {
        token: ctx.owner.token,
        body: { name: `bad ${template}`, trigger: { kind: 'webhook' }, input_template: { instruction: 'ok', detail: template } },
      });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details.issues[0].path).toBe('input_template.detail');
      expect(response.body.error.message).toContain(message);
    }
    // a space makes it a helper call with a literal argument, which the subset refuses
    const spaced = await ctx.server.request('POST', '/tasks', {
      token: ctx.owner.token,
      body: { name: 'spaced', trigger: { kind: 'webhook' }, input_template: { instruction: '{{trigger.body.commits [0]}}' } },
    });
    expect(spaced.status).toBe(400);
    expect(spaced.body.error.message).toContain('unknown helper');
  });
});
