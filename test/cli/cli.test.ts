/**
 * The real client binary against the real server: environment and usage
 * errors with their exit codes, files, ingest, log/progress/status with a
 * pipeline-scoped token.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { CLI_ENTRY, runCli, TSX_LOADER } from './run-cli.js';

const JWT_SECRET = randomBytes(32).toString('hex');
let server: TestServer;
let owner: Session;
let env: Record<string, string>;
let pipelineId: string, runId: string, work: string;
beforeAll(async () => {
  ({ server, owner } = await oneOrg({ JWT_SECRET }, { name: 'CLI Org' }));
  const pipeline = await server.request('POST', '/pipelines', { token: owner.token, body: { name: 'cli-pipeline' } });
  pipelineId = pipeline.body.id as string;
  const started = await server.request('POST', `/pipelines/${pipelineId}/runs`, { token: owner.token, body: {} });
  runId = started.body.run.id as string;
  env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: started.body.token as string, PIPELINE_ID: pipelineId };
  work = mkdtempSync(join(tmpdir(), 'cli-test-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

/** a port nothing listens on: bound, then released */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('environment and connection errors', () => {
  it('exit 3 without SERVICE_API_URL, 4 without SERVICE_TOKEN, each with its message', async () => {
    const noUrl = await runCli(['files', 'list'], { env: { SERVICE_TOKEN: 'x' } });
    expect(noUrl.code).toBe(3);
    expect(noUrl.stderr).toContain('SERVICE_API_URL is not set');
    const noToken = await runCli(['files', 'list'], { env: { SERVICE_API_URL: server.url } });
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toContain('SERVICE_TOKEN is not set');
  });

  it('exit 5 when the server cannot be reached; status --json still says connected: false', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/api/v1`;
    const result = await runCli(['status', '--json'], { env: { SERVICE_API_URL: url, SERVICE_TOKEN: 'x' } });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('cannot connect');
    expect(JSON.parse(result.stdout)).toMatchObject({ connected: false, api_url: url });
  });

  it('exit 5 with a clear message when the URL points at an HTTP server that is not this service', async () => {
    // answers like a web server, a proxy's error page or another JSON API would
    const answers: Record<string, { status: number; type: string; body: string }> = {
      '/html/api/v1': { status: 200, type: 'text/html', body: '<!doctype html><title>It works</title>' },
      '/missing/api/v1': { status: 404, type: 'text/html', body: '<h1>Not Found</h1>' },
      '/gateway/api/v1': { status: 502, type: 'text/plain', body: 'Bad Gateway' },
      '/other-json/api/v1': { status: 400, type: 'application/json', body: '{"message":"bad request"}' },
    };
    const other = createHttpServer((req, res) => {
      const prefix = Object.keys(answers).find((key) => req.url?.startsWith(key));
      const answer = prefix ? answers[prefix]! : { status: 200, type: 'text/plain', body: 'hello' };
      res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as { port: number };
    try {
      for (const prefix of Object.keys(answers)) {
        const url = `http://127.0.0.1:${port}${prefix}`;
        const result = await runCli(['files', 'list'], { env: { SERVICE_API_URL: url, SERVICE_TOKEN: 'x' } });
        expect(result.code, prefix).toBe(5);
        expect(result.stderr, prefix).toContain(`cannot connect to the service at ${url}`);
        expect(result.stderr, prefix).toContain(`HTTP ${answers[prefix]!.status}`);
        expect(result.stderr, prefix).not.toMatch(/SyntaxError|Unexpected token|at .*\.ts:\d+/);
      }
      const status = await runCli(['status', '--json'], { env: { SERVICE_API_URL: `http://127.0.0.1:${port}/html/api/v1`, SERVICE_TOKEN: 'x' } });
      expect(status.code).toBe(5);
      expect(JSON.parse(status.stdout)).toMatchObject({ connected: false });
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('exit 6 for an expired token and for a token the server does not know', async () => {
    const expired = await new SignJWT({ org: owner.organization.id })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(owner.user.id)
      .setIssuer('agent-context-service')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(JWT_SECRET));
    const result = await runCli(['files', 'list'], { env: { ...env, SERVICE_TOKEN: expired } });
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('401 Unauthorized (token_expired)');
    expect((await runCli(['files', 'list'], { env: { ...env, SERVICE_TOKEN: 'not-a-token' } })).code).toBe(6);
  });
});

describe('usage errors', () => {
  it('exit 7 unless exactly one of --file, --data, --stdin is given', async () => {
    const none = await runCli(['graph', 'write-nodes'], { env });
    expect(none.code).toBe(7);
    expect(none.stderr).toContain('exactly one of --file, --data, --stdin is required');
    expect((await runCli(['graph', 'write-rels', '--data', '[]', '--stdin'], { env })).code).toBe(7);
  });

  it('exit 8 for a node reference that is not Label:key', async () => {
    const get = await runCli(['graph', 'get', '--id', 'no-colon'], { env });
    expect(get.code).toBe(8);
    expect(get.stderr).toContain('must be Label:key');
    expect((await runCli(['graph', 'add-rel', '--type', 'USES', '--from', 'A:1', '--to', ':2'], { env })).code).toBe(8);
    expect((await runCli(['graph', 'write-rels', '--data', '[{"type":"T","from":"bad","to":"A:1"}]'], { env })).code).toBe(8);
  });

  it('exit 9 for a glob that does not compile, before anything is sent', async () => {
    const list = await runCli(['files', 'list', '--filter', '[unclosed'], { env: { SERVICE_API_URL: 'http://127.0.0.1:9/api/v1', SERVICE_TOKEN: 'x' } });
    expect(list.code).toBe(9);
    expect(list.stderr).toContain('invalid filter pattern');
    expect((await runCli(['ingest', 'scan', '--dir', work, '--exclude', '*.{ts'])).code).toBe(9);
  });

  it('exit 2 for unknown commands and options, missing required options and bad values', async () => {
    expect((await runCli(['graph', 'explode'], { env })).code).toBe(2);
    expect((await runCli(['files', 'list', '--colour'], { env })).code).toBe(2);
    expect((await runCli(['graph', 'search'], { env })).stderr).toContain('--query is required');
    expect((await runCli(['progress', '1.5'], { env })).code).toBe(2);
    expect((await runCli(['log', 'x', '--level', 'loud'], { env })).code).toBe(2);
    expect((await runCli(['files', 'list', '--sort', 'colour'], { env })).code).toBe(2);
    expect((await runCli([], { env })).code).toBe(2);
  });

  it('exit 10 for something the server does not have', async () => {
    const result = await runCli(['files', 'info', '--path', 'missing.txt'], { env });
    expect(result.code).toBe(10);
    expect(result.stderr).toContain('not found');
  });
});

describe('files', () => {
  it('upload, info, list (filter, sort, desc), download; global flags before or after the command', async () => {
    const local = join(work, 'report.csv');
    writeFileSync(local, 'a,b\n1,2\n');
    const uploaded = await runCli(['files', 'upload', '--input', local, '--path', 'reports/report.csv'], { env });
    expect(uploaded.code).toBe(0);
    expect(uploaded.stdout).toContain('uploaded');
    writeFileSync(join(work, 'big.txt'), 'x'.repeat(100));
    expect((await runCli(['-q', 'files', 'upload', '--input', join(work, 'big.txt')], { env })).code).toBe(0);

    const info = await runCli(['--json', 'files', 'info', '--path', 'reports/report.csv'], { env });
    expect(JSON.parse(info.stdout)).toMatchObject({ path: 'reports/report.csv', size: 8, content_type: 'text/csv' });
    const human = await runCli(['files', 'info', '--path', 'reports/report.csv'], { env });
    expect(human.stdout).toContain('type: text/csv');

    const filtered = await runCli(['files', 'list', '--filter', '*.csv', '-j'], { env });
    expect(JSON.parse(filtered.stdout).items.map((file: { path: string }) => file.path)).toEqual(['reports/report.csv']);
    const bySize = await runCli(['files', 'list', '--sort', 'size', '--desc', '--json'], { env });
    expect(
      JSON.parse(bySize.stdout)
        .items.map((file: { path: string }) => file.path)
        .slice(0, 2),
    ).toEqual(['big.txt', 'reports/report.csv']);

    const target = join(work, 'downloads');
    mkdirSync(target);
    const downloaded = await runCli(['files', 'download', '--path', 'reports/report.csv', '--output', target], { env });
    expect(downloaded.code).toBe(0);
    expect(readFileSync(join(target, 'report.csv'), 'utf8')).toBe('a,b\n1,2\n');
    // default output: the current directory, same name
    expect((await runCli(['files', 'download', '--path', 'big.txt'], { env, cwd: target })).code).toBe(0);
    expect(readFileSync(join(target, 'big.txt'), 'utf8')).toBe('x'.repeat(100));
  });

  it('upload-dir sends every file once: a second run skips unchanged files and sends only the changed one', async () => {
    const dir = join(work, 'tree');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'one.md'), '# one');
    writeFileSync(join(dir, 'sub', 'two.json'), '{"two":2}');
    const first = await runCli(['files', 'upload-dir', '--input', dir, '--prefix', 'docs', '--json'], { env });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ uploaded: ['docs/one.md', 'docs/sub/two.json'], skipped: [], bytes_sent: 14 });
    // not a terminal: one plain progress line per file
    expect(first.stderr).toContain('files upload-dir 2/2 files: docs/sub/two.json');

    writeFileSync(join(dir, 'sub', 'two.json'), '{"two":3}');
    const second = await runCli(['files', 'upload-dir', '--input', dir, '--prefix', 'docs', '--json'], { env });
    expect(JSON.parse(second.stdout)).toEqual({ uploaded: ['docs/sub/two.json'], skipped: ['docs/one.md'], bytes_sent: 9 });
    const info = await server.request('GET', '/files/info?path=docs/sub/two.json', { token: owner.token });
    expect(info.body.size).toBe(9);
    expect((await runCli(['files', 'upload-dir', '--input', dir, '--prefix', 'docs', '-q'], { env })).stderr).toBe('');
  });
});

describe('progress on a terminal', () => {
  it('draws a progress bar when stderr is a TTY (run under script(1) for a pseudo-terminal)', async () => {
    const dir = join(work, 'tty-tree');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.txt'), 'a');
    writeFileSync(join(dir, 'b.txt'), 'b');
    const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
    const command = [process.execPath, '--import', TSX_LOADER, CLI_ENTRY, 'files', 'upload-dir', '--input', dir, '--prefix', 'tty'].map(quote).join(' ');
    const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    });
    // cli-progress "shades_classic": full and empty blocks, and the count
    expect(stdout).toContain('\u2588');
    expect(stdout).toContain('2/2 files');
    expect(stdout).not.toContain('files upload-dir 1/2 files:');
  });
});

describe('ingest', () => {
  it('scan works offline and reports counts and sizes by extension; --dry-run lists the files', async () => {
    const dir = join(work, 'corpus');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(join(dir, 'a.md'), 'aaaa');
    writeFileSync(join(dir, 'nested', 'b.md'), 'bb');
    writeFileSync(join(dir, 'nested', 'c.log'), 'c');
    const scan = await runCli(['ingest', 'scan', '--dir', dir, '--exclude', '*.log', '--json', '--dry-run']);
    expect(scan.code).toBe(0);
    expect(JSON.parse(scan.stdout)).toEqual({
      dir,
      total_files: 2,
      total_bytes: 6,
      extensions: [{ extension: '.md', files: 2, bytes: 6 }],
      files: [
        { path: 'a.md', size: 4 },
        { path: 'nested/b.md', size: 2 },
      ],
    });
    const human = await runCli(['ingest', 'scan', '--dir', dir]);
    expect(human.stdout).toMatch(/\.md\s+2\s+6 B/);
    expect(human.stdout).toContain('total: 3 files, 7 B');
  });

  it('upload sends the matching files under the prefix, and nothing twice', async () => {
    const dir = join(work, 'corpus');
    const first = await runCli(['ingest', 'upload', '--dir', dir, '--include', '**/*.md', '--prefix', '/raw/', '--json'], { env });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).uploaded).toEqual(['raw/a.md', 'raw/nested/b.md']);
    const again = await runCli(['ingest', 'upload', '--dir', dir, '--include', '**/*.md', '--prefix', 'raw', '--json'], { env });
    expect(JSON.parse(again.stdout)).toEqual({ uploaded: [], skipped: ['raw/a.md', 'raw/nested/b.md'], bytes_sent: 0 });
  });
});

describe('log, progress and status with a pipeline-scoped token', () => {
  it('log and progress land in the pipeline run record', async () => {
    expect((await runCli(['log', 'starting scan', '--phase', 'scan'], { env })).code).toBe(0);
    expect((await runCli(['--quiet', 'log', 'wrote nodes', '--level', 'graph'], { env })).stdout).toBe('');
    expect((await runCli(['progress', '0.25', 'a quarter', '--phase', 'scan'], { env })).code).toBe(0);
    const run = await server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: owner.token });
    expect(run.body.progress).toMatchObject({ fraction: 0.25, message: 'a quarter', phase: 'scan' });
    const entries = run.body.entries as { kind: string; level: string; message: string }[];
    expect(entries.slice(-3).map((entry) => [entry.kind, entry.level, entry.message])).toEqual([
      ['log', 'info', 'starting scan'],
      ['log', 'graph', 'wrote nodes'],
      ['progress', 'info', 'a quarter'],
    ]);
  });

  it('a login token names its run with PIPELINE_RUN_ID', async () => {
    const loginEnv = { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token, PIPELINE_RUN_ID: runId };
    expect((await runCli(['log', 'from a person'], { env: loginEnv })).code).toBe(0);
    const withoutRun = await runCli(['log', 'x'], { env: { ...loginEnv, PIPELINE_RUN_ID: undefined } });
    expect(withoutRun.code).toBe(1);
    expect(withoutRun.stderr).toContain('PIPELINE_RUN_ID');
  });

  it('status --json says connected, with the api url, the run and the graph counts', async () => {
    const status = await runCli(['status', '--json'], { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual({
      connected: true,
      api_url: server.url,
      pipeline_id: pipelineId,
      organization_id: owner.organization.id,
      token_kind: 'pipeline',
      run: { id: runId, status: 'running' },
      graph_stats: { node_count: 0, relationship_count: 0 },
    });
    const human = await runCli(['status'], { env });
    expect(human.stdout).toContain(`connected to ${server.url}`);
    expect(human.stdout).toContain('graph: 0 nodes, 0 relationships');
  });
});
