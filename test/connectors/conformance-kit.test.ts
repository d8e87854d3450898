/** The kit's checks catch what they claim to: each bad behaviour is reported with a readable problem. */
import { describe, expect, it } from 'vitest';
import { abortProblems, sampleCallProblems, staticProblems, validateProblems } from '../../connectors/conformance/index.js';
import { ToolError } from '../../connectors/contract.js';
import { checkPlugin } from '../../connectors/loader.js';
import type { LoadedTool } from '../../runtime/tools/registry.js';
import { plugin, tool } from './test-plugins.js';

const sample = { orgId: 'org_1', sourceId: 'src_1', config: {} };

const loadedTool = (run: (args: Record<string, unknown>, ctx: { signal: AbortSignal }) => Promise<unknown>): LoadedTool => {
  const loaded = checkPlugin(plugin({ kind: 'kit', tools: [tool({ name: 't', run })] }), 'test');
  const [first] = loaded.tools;
  if (!first) throw new Error('no tool');
  return first;
};

describe('conformance kit checks', () => {
  it('reports the static contract problems the loader would refuse, and none for a good plugin', () => {
    expect(staticProblems({ ...plugin({ kind: 'kit' }), contract: '^0.9', tools: [tool({ name: 'a' }), tool({ name: 'a' })] }).problems).toEqual([
      'contract range "^0.9" does not accept contract version 1',
      'duplicate tool name kit.a',
    ]);
    expect(staticProblems(plugin({ kind: 'kit' })).problems).toEqual([]);
  });

  it('reports validate() that accepts a bad config, refuses without details, refuses a good one, or throws', async () => {
    const lenient = plugin({ kind: 'kit', validate: async () => ({ ok: true }) });
    expect(await validateProblems(lenient, { token: 'bad' }, false)).toEqual(['validate() accepted invalidConfig']);
    const terse = plugin({ kind: 'kit', validate: async () => ({ ok: false }) });
    expect(await validateProblems(terse, { token: 'bad' }, false)).toEqual(['validate() refused invalidConfig without details saying what is wrong']);
    expect(await validateProblems(terse, { token: 'good' }, true)).toEqual(['validate() refused validConfig: {"ok":false}']);
    const throwing = plugin({
      kind: 'kit',
      validate: async () => {
        throw new Error('401 from upstream');
      },
    });
    expect(await validateProblems(throwing, {}, false)).toEqual(['validate() threw instead of returning { ok: false, ... }: 401 from upstream']);
  });

  it('reports a plain throw, a non-JSON result, a bad ToolError code and sample arguments that fail the schema', async () => {
    const plain = loadedTool(async () => {
      throw new RangeError('index out of range');
    });
    expect((await sampleCallProblems(plain, {}, sample)).problems).toEqual(['kit.t threw a plain RangeError instead of a ToolError: index out of range']);
    const dated = loadedTool(async () => ({ at: new Date(0) }));
    expect((await sampleCallProblems(dated, {}, sample)).problems).toEqual([
      'kit.t returned a value that is not plain JSON (Dates, class instances, undefined fields, NaN are not)',
    ]);
    const shouting = loadedTool(async () => {
      throw new ToolError('NotFound', 'nope');
    });
    expect((await sampleCallProblems(shouting, {}, sample)).problems).toEqual(['kit.t threw a ToolError with code "NotFound": codes are snake_case']);
    expect((await sampleCallProblems(plain, { extra: 1 }, sample)).problems).toEqual([
      'sample arguments fail kit.t\'s input_schema: [{"path":"extra","message":"is not an accepted property"}]',
    ]);
    const fine = loadedTool(async () => {
      throw new ToolError('not_found', 'no such thing', { id: 'x' });
    });
    expect(await sampleCallProblems(fine, {}, sample)).toEqual({
      outcome: { error: { code: 'not_found', message: 'no such thing', details: { id: 'x' } } },
      problems: [],
    });
  });

  it('reports a tool that ignores an aborted signal, and accepts one that rejects with the abort', async () => {
    const deaf = loadedTool(async () => ({ done: true }));
    expect(await abortProblems(deaf, {}, sample)).toEqual([
      'kit.t ran to completion although its signal was aborted (call ctx.signal.throwIfAborted() before any work and pass ctx.signal on)',
    ]);
    const wrongError = loadedTool(async () => {
      throw new Error('boom');
    });
    expect(await abortProblems(wrongError, {}, sample)).toEqual(['kit.t rejected an aborted call with something else than an abort: boom']);
    const honours = loadedTool(async (_args, ctx) => {
      ctx.signal.throwIfAborted();
      return { done: true };
    });
    expect(await abortProblems(honours, {}, sample)).toEqual([]);
    const cancels = loadedTool(async () => {
      throw new ToolError('cancelled', 'stopped');
    });
    expect(await abortProblems(cancels, {}, sample)).toEqual([]);
  });
});
