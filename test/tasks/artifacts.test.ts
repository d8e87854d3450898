/** Run artifacts end to end: `files.write_artifact` in a task run, listed with the run, downloaded through /files. */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type ToolCatalog } from '../../runtime/tools/catalog.js';
import { createFilesPlugin } from '../../connectors/files/index.js';
import { filesPort } from '../../runtime/files/files-port.js';
import { MAX_ARTIFACT_BYTES } from '../../connectors/files/tools/write-artifact.js';
import { loadPlugins } from '../../connectors/loader.js';
import { resolveExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { Session, TestServer } from '../helpers/server.js';
import { wireOrganization, execute } from '../runtime/chat-helpers.js';
import { createTask, runReaches, runsOf } from './helpers.js';
import { expectError } from '../helpers/expect-status.js';

const REPORT = '# Weekly report\n\nAll 12 services green; one flaky test (ünïcode survives).\n';
// a 1x1 transparent PNG
const PIXEL_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const REPO_PLUGINS = fileURLToPath(new URL('../../plugins.json', import.meta.url));

const toolResults = (run: any): any[] => run.transcript.filter((entry: any) => entry.type === 'tool_result').map((entry: any) => entry.data.result);

describe('run artifacts', () => {
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  beforeAll(async () => ({ server, llm, owner } = await startWiredOrg()));
  afterAll(async () => stopLlmServer({ server, llm }));

  /** Fires a task (writes allowed) whose model makes `calls` in one turn, then answers; resolves with the finished run. */
  async function runWith(session: Session, name: string, calls: ReturnType<typeof execute>[]): Promise<{ task: any; run: any }> {
    const task = await createTask(server, session, {
      name,
      trigger: { kind: 'webhook' },
      input: { instruction: 'write the weekly report' },
      approval_defaults: { write: 'allow' },
    });
    llm.script([{ tool_calls: calls }, { text: 'done' }]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: session.token });
    expect(fire.status).toBe(202);
    return { task, run: await runReaches(server, session, task.id, fire.body.run_id, 'succeeded') };
  }

  it('a file the run writes is listed with the run and downloads through /files', async () => {
    const { task, run } = await runWith(owner, 'report', [execute('files.write_artifact', { path: 'report.md', content: REPORT })]);
    const path = `artifacts/${run.id}/report.md`;
    const size = Buffer.byteLength(REPORT, 'utf8');
    expect(toolResults(run)).toEqual([{ result: { path, size, content_type: 'text/markdown' } }]);

    const expected = [{ path, size, content_type: 'text/markdown', modified_at: expect.any(String) }];
    expect(run.artifacts).toEqual(expected);
    const listed = (await runsOf(server, owner, task.id)).find((item) => item.id === run.id);
    expect(listed.artifacts).toEqual(expected);
    expect(Number.isNaN(Date.parse(listed.artifacts[0].modified_at))).toBe(false);

    const download = await server.request('GET', `/files/content?path=${encodeURIComponent(path)}`, { token: owner.token });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/markdown');
    expect(download.text).toBe(REPORT);

    // nobody but the run writes there: an upload is refused, and the run's record stays as the run left it
    for (const forged of [`artifacts/${run.id}/forged.md`, `./artifacts//${run.id}/report.md`, 'artifacts']) {
      const refused = await server.request('PUT', `/files/content?path=${encodeURIComponent(forged)}`, { token: owner.token, body: 'forged' });
      expectError(refused, 403, 'forbidden');
    }
    expect((await runsOf(server, owner, task.id)).find((item) => item.id === run.id).artifacts).toEqual(expected);
    expect((await server.request('GET', `/files/content?path=${encodeURIComponent(path)}`, { token: owner.token })).text).toBe(REPORT);
    // cleaning up is allowed
    expect((await server.request('DELETE', `/files/content?path=${encodeURIComponent(path)}`, { token: owner.token })).status).toBe(200);
  });

  it('writes binary content from base64 into sub-folders, and list_artifacts answers what the run wrote so far', async () => {
    const { run } = await runWith(owner, 'chart', [
      execute('files.write_artifact', { path: 'charts/./pixel.png', content: PIXEL_BASE64, encoding: 'base64' }),
      execute('files.write_artifact', { path: 'notes.txt', content: 'first' }),
      // the same path again replaces the file
      execute('files.write_artifact', { path: 'notes.txt', content: 'second version' }),
      execute('files.list_artifacts', {}),
    ]);
    const png = Buffer.from(PIXEL_BASE64, 'base64');
    const folder = `artifacts/${run.id}`;
    const results = toolResults(run);
    expect(results[0]).toEqual({ result: { path: `${folder}/charts/pixel.png`, size: png.length, content_type: 'image/png' } });
    expect(results[3].result.artifacts.map((file: any) => [file.path, file.size])).toEqual([
      [`${folder}/charts/pixel.png`, png.length],
      [`${folder}/notes.txt`, 'second version'.length],
    ]);
    expect(run.artifacts.map((file: any) => [file.path, file.size, file.content_type])).toEqual([
      [`${folder}/charts/pixel.png`, png.length, 'image/png'],
      [`${folder}/notes.txt`, 'second version'.length, 'text/plain'],
    ]);
    const download = await fetch(`${server.url}/files/content?path=${encodeURIComponent(`${folder}/charts/pixel.png`)}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(Buffer.from(await download.arrayBuffer()).equals(png)).toBe(true);
  });

  it('a path that climbs out or is absolute is a tool error the model reads (invalid_path), and nothing is written', async () => {
    const org = (await wireOrganization(server, llm)).session;
    const { run } = await runWith(org, 'escape', [
      execute('files.write_artifact', { path: '../escape.txt', content: 'out' }),
      execute('files.write_artifact', { path: 'a/../../../escape.txt', content: 'out' }),
      execute('files.write_artifact', { path: '/etc/escape.txt', content: 'out' }),
      execute('files.write_artifact', { path: 'back\\slash.txt', content: 'out' }),
    ]);
    const errors = toolResults(run).map((result) => result.error);
    expect(errors.map((error) => error.code)).toEqual(['invalid_path', 'invalid_path', 'invalid_path', 'invalid_path']);
    expect(errors[0].message).toContain('".." is not allowed');
    expect(errors[0].details).toEqual({ path: '../escape.txt' });
    expect(run.artifacts).toEqual([]);
    const everything = await server.request('GET', '/files?limit=200', { token: org.token });
    expect(everything.status).toBe(200);
    expect(everything.body.total).toBe(0);
  });

  it('another organization can neither see nor download the artifact', async () => {
    const { task, run } = await runWith(owner, 'private', [execute('files.write_artifact', { path: 'secret.md', content: 'owner only' })]);
    const path = `artifacts/${run.id}/secret.md`;
    expect(run.artifacts.map((file: any) => file.path)).toEqual([path]);

    const stranger = await server.register('Stranger Inc');
    const download = await server.request('GET', `/files/content?path=${encodeURIComponent(path)}`, { token: stranger.token });
    expectError(download, 404, 'not_found');
    expect((await server.request('GET', `/files/info?path=${encodeURIComponent(path)}`, { token: stranger.token })).status).toBe(404);
    const listing = await server.request('GET', '/files?prefix=artifacts&limit=200', { token: stranger.token });
    expect(listing.body.total).toBe(0);
    expect((await server.request('GET', `/tasks/${task.id}/runs`, { token: stranger.token })).status).toBe(404);
    expect((await server.request('GET', `/tasks/${task.id}/runs/${run.id}`, { token: stranger.token })).status).toBe(404);
  });

  it('documents the artifacts of a run in /openapi.json', async () => {
    const document = await server.request('GET', '/openapi.json');
    const run = document.body.paths['/api/v1/tasks/{id}/runs/{run_id}'].get.responses['200'].content['application/json'].schema;
    expect(run.properties.artifacts.items).toMatchObject({
      type: 'object',
      properties: { path: { type: 'string' }, size: { type: 'integer' }, content_type: { type: 'string' }, modified_at: { type: 'string' } },
    });
    expect([...run.properties.artifacts.items.required].sort()).toEqual(['content_type', 'modified_at', 'path', 'size']);
  });

  describe('the tools outside the agent loop', () => {
    let catalog: ToolCatalog;

    beforeAll(async () => {
      const registry = await loadPlugins({
        pluginsFile: REPO_PLUGINS,
        builtins: [createFilesPlugin()],
        ports: { files: filesPort(server.service.services.files) },
      });
      catalog = createCatalog(registry, { sources: [] });
    });

    const call = async (tool: string, args: unknown, runId?: string): Promise<ToolOutcome> => {
      const resolution = resolveExecuteConnectorTool(catalog, { tool, arguments: args });
      if (!resolution.ok) return { error: resolution.error };
      return catalog.run(resolution, { orgId: owner.organization.id, signal: new AbortController().signal, ...(runId === undefined ? {} : { runId }) });
    };

    it('are a write and a read tool, visible without a source', () => {
      expect(catalog.entries().map((entry) => [entry.name, entry.effect, entry.source_id ?? null])).toEqual([
        ['files.list_artifacts', 'read', null],
        ['files.write_artifact', 'write', null],
      ]);
    });

    it('answer no_run without a run (the /mcp server), too_large above the cap, invalid_arguments for bad base64', async () => {
      expect(await call('files.write_artifact', { path: 'x.txt', content: 'x' })).toMatchObject({ error: { code: 'no_run' } });
      expect(await call('files.list_artifacts', {})).toMatchObject({ error: { code: 'no_run' } });

      const over = await call('files.write_artifact', { path: 'big.bin', content: 'a'.repeat(MAX_ARTIFACT_BYTES + 1) }, 'run_artifact_cap');
      expect(over).toMatchObject({ error: { code: 'too_large', details: { max_bytes: MAX_ARTIFACT_BYTES, size: MAX_ARTIFACT_BYTES + 1 } } });
      const exact = await call('files.write_artifact', { path: 'exact.bin', content: 'a'.repeat(MAX_ARTIFACT_BYTES) }, 'run_artifact_cap');
      expect(exact).toMatchObject({ result: { size: MAX_ARTIFACT_BYTES } });

      const bad = await call('files.write_artifact', { path: 'x.png', content: 'not base64!', encoding: 'base64' }, 'run_artifact_cap');
      expect(bad).toMatchObject({ error: { code: 'invalid_arguments', details: { issues: [{ path: 'content' }] } } });
      expect(await call('files.list_artifacts', {}, 'run_artifact_cap')).toMatchObject({
        result: { artifacts: [{ path: 'artifacts/run_artifact_cap/exact.bin', size: MAX_ARTIFACT_BYTES }] },
      });
    });
  });
});
