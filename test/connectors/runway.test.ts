/**
 * The runway (media generation) connector against the fake Runway API through
 * the official SDK: conformance kit, validation, the three media tools and the
 * status tool, the spec's six errors, enabled_tools, 429 retry.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { checkPlugin, createRegistry } from '../../connectors/loader.js';
import { createRunwayPlugin } from '../../connectors/runway/index.js';
import { startFakeRunwayServer } from '../fakes/runway/server.js';

const fake = await startFakeRunwayServer();
const image = 'https://images.example.com/product.png';
fake.reachableImages.add(image);
afterAll(() => fake.close());

const plugin = createRunwayPlugin();
const registry = createRegistry([checkPlugin(plugin, 'built-in')]);
const config = { api_key: fake.apiKey, base_url: fake.url };

const run = (name: string, args: Record<string, unknown>, sourceConfig: Record<string, unknown> = config) => {
  const catalog = createCatalog(registry, { sources: [{ id: 'src_media', kind: 'runway', name: 'Runway', config: sourceConfig }] });
  const resolved = catalog.resolve(`runway.${name}`, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.error));
  return catalog.run(resolved, { orgId: 'org_media', signal: new AbortController().signal });
};
const lastCreate = () => fake.requests.filter((r) => r.method === 'POST').at(-1)!;

beforeEach(() => {
  fake.credits = 1000;
  fake.throttleNext(0);
});

describeConnectorConformance(plugin, {
  validConfig: config,
  invalidConfig: { api_key: 'key_revoked', base_url: fake.url },
  toolCalls: [
    { tool: 'media_text_to_video', args: { prompt: 'a lighthouse at dawn' } },
    { tool: 'media_image_to_video', args: { image_url: image, prompt: 'slow zoom' } },
    { tool: 'media_text_to_image', args: { prompt: 'a red bicycle', num_images: 1 } },
    { tool: 'media_job_status', args: { job_id: 'no-such-task' }, expect: { error_code: 'not_found' } },
  ],
});

describe('runway validate', () => {
  it('accepts a valid key and reports the credit balance', async () => {
    expect(await plugin.validate(config, new AbortController().signal)).toEqual({ ok: true, details: { credit_balance: 1000 } });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/organization', version: '2024-11-06' });
  });

  it('refuses an invalid API key (401)', async () => {
    expect(await plugin.validate({ ...config, api_key: 'key_wrong' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'unauthorized', status: 401 },
    });
  });

  it('refuses a missing key, an unsupported default ratio and an unknown tool kind, naming the field', async () => {
    const signal = new AbortController().signal;
    expect(await plugin.validate({ base_url: fake.url }, signal)).toMatchObject({ ok: false, details: { reason: 'missing_field', field: 'api_key' } });
    expect(await plugin.validate({ ...config, default_ratio: '4:3' }, signal)).toMatchObject({
      ok: false,
      details: { reason: 'unsupported_ratio', field: 'default_ratio', value: '4:3' },
    });
    expect(await plugin.validate({ ...config, enabled_tools: ['audio'] }, signal)).toMatchObject({
      ok: false,
      details: { field: 'enabled_tools', unknown: ['audio'] },
    });
  });

  it('accepts an account without credits but warns', async () => {
    fake.credits = 0;
    expect(await plugin.validate(config, new AbortController().signal)).toMatchObject({
      ok: true,
      details: { credit_balance: 0, warning: expect.stringContaining('insufficient_credits') },
    });
  });
});

describe('runway tools', () => {
  it('starts a text-to-video job with the spec defaults (4 s, 16:9 as 1280:720) and polls it to its output', async () => {
    const started = (await run('media_text_to_video', { prompt: 'a lighthouse at dawn' })) as { result: any };
    expect(started.result).toEqual({
      job_id: expect.any(String),
      status: 'pending',
      kind: 'video',
      model: 'gen4.5',
      ratio: '16:9',
      duration: 4,
      poll_with: 'media_job_status',
    });
    expect(lastCreate()).toMatchObject({
      path: '/v1/text_to_video',
      version: '2024-11-06',
      body: { model: 'gen4.5', promptText: 'a lighthouse at dawn', ratio: '1280:720', duration: 4 },
    });
    const id = started.result.job_id as string;
    expect(await run('media_job_status', { job_id: id })).toMatchObject({ result: { job_id: id, status: 'pending', progress: 0 } });
    expect(await run('media_job_status', { job_id: id })).toMatchObject({ result: { status: 'running', progress: 0.5 } });
    expect(await run('media_job_status', { job_id: id })).toMatchObject({
      result: { status: 'succeeded', progress: 1, output_urls: [expect.stringMatching(new RegExp(`/${id}\\.mp4\\?`))] },
    });
  });

  it('takes the source defaults and the arguments: model, duration, ratio', async () => {
    const source = { ...config, default_model: 'gen4_turbo', default_duration: 6, default_ratio: '9:16' };
    const started = (await run('media_image_to_video', { image_url: image }, source)) as { result: any };
    expect(started.result).toMatchObject({ model: 'gen4_turbo', ratio: '9:16', duration: 6 });
    expect(lastCreate().body).toEqual({ model: 'gen4_turbo', promptImage: image, ratio: '720:1280', duration: 6 });
    await run('media_image_to_video', { image_url: image, prompt: 'pan left', ratio: '1:1', duration: 8 }, source);
    expect(lastCreate().body).toEqual({ model: 'gen4_turbo', promptImage: image, promptText: 'pan left', ratio: '960:960', duration: 8 });
  });

  it('starts one text-to-image job per image, at image pixel sizes', async () => {
    const started = (await run('media_text_to_image', { prompt: 'a red bicycle', num_images: 2, ratio: '1:1' })) as { result: any };
    expect(started.result).toMatchObject({ status: 'pending', kind: 'image', model: 'gen4_image', ratio: '1:1' });
    expect(started.result.job_ids).toHaveLength(2);
    expect(new Set(started.result.job_ids).size).toBe(2);
    expect(lastCreate()).toMatchObject({ path: '/v1/text_to_image', body: { model: 'gen4_image', promptText: 'a red bicycle', ratio: '1024:1024' } });
  });

  it('offers only the enabled kinds: the catalog hides the others, and a direct call of one answers tool_disabled', async () => {
    const imagesOnly = { ...config, enabled_tools: ['image'] };
    const catalog = createCatalog(registry, { sources: [{ id: 'src_media', kind: 'runway', name: 'Runway', config: imagesOnly }] });
    const names = catalog
      .entries()
      .filter((entry) => entry.connector === 'runway')
      .map((entry) => entry.name);
    expect(names).toEqual(['runway.media_job_status', 'runway.media_text_to_image']);
    expect(catalog.resolve('runway.media_text_to_video', { prompt: 'x' })).toMatchObject({ ok: false, error: { code: 'unknown_tool' } });
    const all = createCatalog(registry, { sources: [{ id: 'src_media', kind: 'runway', name: 'Runway', config }] });
    expect(all.entries().filter((entry) => entry.connector === 'runway')).toHaveLength(4);
    const direct = plugin.tools.find((tool) => tool.name === 'media_text_to_video');
    await expect(
      direct?.run({ prompt: 'x' }, { orgId: 'org_x', sourceId: 'src_media', config: imagesOnly, signal: new AbortController().signal }),
    ).rejects.toMatchObject({ code: 'tool_disabled' });
    expect(await run('media_text_to_image', { prompt: 'x' }, imagesOnly)).toMatchObject({ result: { kind: 'image' } });
  });

  it('retries a 429 after its Retry-After', async () => {
    fake.throttleNext(1, 1);
    const before = fake.requests.length;
    expect(await run('media_text_to_image', { prompt: 'a boat' })).toMatchObject({ result: { job_ids: [expect.any(String)] } });
    expect(fake.requests.length - before).toBe(2);
  });
});

describe('runway errors (the spec six)', () => {
  it('unauthorized: an invalid API key', async () => {
    expect(await run('media_text_to_video', { prompt: 'x' }, { ...config, api_key: 'key_wrong' })).toMatchObject({
      error: { code: 'unauthorized', details: { status: 401 } },
    });
  });

  it('insufficient_credits: the account is out of credits', async () => {
    fake.credits = 10;
    expect(await run('media_text_to_video', { prompt: 'x' })).toMatchObject({
      error: { code: 'insufficient_credits', details: { status: 400, upstream_message: 'You do not have enough credits to run this task.' } },
    });
  });

  it('generation_failed: the content filter rejected the prompt', async () => {
    const started = (await run('media_text_to_video', { prompt: `something ${fake.blockedWord}` })) as { result: any };
    const id = started.result.job_id as string;
    await run('media_job_status', { job_id: id });
    await run('media_job_status', { job_id: id });
    expect(await run('media_job_status', { job_id: id })).toMatchObject({
      error: { code: 'generation_failed', details: { job_id: id, failure_code: 'SAFETY.INPUT.TEXT' } },
    });
  });

  it('timeout: a job still running long after it was created', async () => {
    const started = (await run('media_text_to_video', { prompt: 'a long one' })) as { result: any };
    const task = fake.tasks.get(started.result.job_id as string)!;
    task.outcome = { status: 'RUNNING' };
    task.status = 'RUNNING';
    expect(await run('media_job_status', { job_id: task.id })).toMatchObject({ result: { status: 'running' } });
    // the fake's clock: the task was created 20 minutes ago
    task.createdAt = new Date(Date.now() - 20 * 60_000).toISOString();
    expect(await run('media_job_status', { job_id: task.id })).toMatchObject({ error: { code: 'timeout', details: { job_id: task.id, status: 'running' } } });
  });

  it('invalid_image_url: not an https URL (refused before spending), or an image Runway cannot fetch', async () => {
    expect(await run('media_image_to_video', { image_url: 'http://images.example.com/a.png' })).toMatchObject({ error: { code: 'invalid_image_url' } });
    expect(await run('media_image_to_video', { image_url: 'file:///etc/passwd' })).toMatchObject({ error: { code: 'invalid_image_url' } });
    const posts = fake.requests.filter((r) => r.method === 'POST').length;
    expect(await run('media_image_to_video', { image_url: 'https://images.example.com/gone.png' })).toMatchObject({
      error: { code: 'invalid_image_url', details: { status: 400, upstream_message: expect.stringContaining('could not be fetched') } },
    });
    expect(fake.requests.filter((r) => r.method === 'POST').length).toBe(posts + 1);
  });

  it('unsupported_ratio: not one of 16:9, 1:1, 9:16, one the model does not take, or one Runway refuses', async () => {
    expect(await run('media_text_to_image', { prompt: 'x', ratio: '4:3' })).toMatchObject({
      error: { code: 'unsupported_ratio', message: expect.stringContaining('16:9, 1:1, 9:16'), details: { ratio: '4:3' } },
    });
    expect(await run('media_text_to_video', { prompt: 'x', ratio: '1:1' })).toMatchObject({
      error: { code: 'unsupported_ratio', details: { model: 'gen4.5', supported: ['16:9', '9:16'] } },
    });
    // a model this connector knows nothing about: Runway's own validation answers
    expect(await run('media_image_to_video', { image_url: image, model: 'gen3a_turbo', ratio: '16:9' })).toMatchObject({
      error: { code: 'unsupported_ratio', details: { status: 400, upstream_message: expect.stringContaining("'1280:768' | '768:1280'") } },
    });
    expect(await run('media_text_to_image', { prompt: 'x', model: 'gen4_image_turbo_x', ratio: '1:1' })).toMatchObject({ error: { code: 'invalid_request' } });
    fake.reachableImages.add('https://images.example.com/wide.png');
    expect(await run('media_image_to_video', { image_url: 'https://images.example.com/wide.png', model: 'gen4.5', ratio: '16:9' })).toMatchObject({
      result: { model: 'gen4.5' },
    });
  });
});
