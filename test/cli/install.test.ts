/**
 * GET /cli/install.sh and the package it installs: the script is run by `sh`
 * in a throwaway HOME against the real server, the installed command then
 * talks to that server; a wrong checksum installs nothing; a Host header
 * chosen by the caller never reaches the script unquoted.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_COOKIE_VALUE } from '../../cli/terraform/plugin.js';
import { expectError } from '../helpers/expect-status.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';

const run = promisify(execFile);
let server: TestServer;
let owner: Session;
let home: string;
beforeAll(async () => {
  ({ server, owner } = await oneOrg());
  home = mkdtempSync(join(tmpdir(), 'cli-install-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const get = async (path: string): Promise<Response> => fetch(`${server.url}${path}`);
const shellEnv = (extra: Record<string, string> = {}): Record<string, string> => ({ PATH: process.env['PATH'] ?? '', HOME: home, ...extra });

describe('the package', () => {
  it('manifest, SHA256SUMS and the tarball agree, and the bytes do not change between downloads', async () => {
    const manifest = await server.request('GET', '/cli/manifest.json');
    expect(manifest.status).toBe(200);
    const { file, sha256: digest, size, version, url } = manifest.body as { file: string; sha256: string; size: number; version: string; url: string };
    expect(file).toBe(`service-proxy-cli-${version}.tgz`);
    expect(url).toBe(`${server.url}/cli/${file}`);

    const first = await get(`/cli/${file}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/gzip');
    const bytes = Buffer.from(await first.arrayBuffer());
    expect(bytes.length).toBe(size);
    expect(sha256(bytes)).toBe(digest);
    expect(first.headers.get('x-checksum-sha256')).toBe(digest);
    const alias = Buffer.from(await (await get('/cli/service-proxy-cli.tgz')).arrayBuffer());
    expect(alias.equals(bytes)).toBe(true);

    const sums = await (await get('/cli/SHA256SUMS')).text();
    expect(sums).toContain(`${digest}  ${file}\n`);
  });

  it('an unknown file under /cli is a 404 envelope', async () => {
    expectError(await server.request('GET', '/cli/service-proxy-cli-0.0.0.tgz'), 404, 'not_found');
    expectError(await server.request('GET', '/cli/..%2Fpackage.json'), 404, 'not_found');
  });
});

describe('install.sh', () => {
  it('installs a working client from this server: `curl | sh`, then the command reaches the server', async () => {
    const { stdout } = await run('sh', ['-c', `curl -fsSL '${server.url}/cli/install.sh' | sh`], { env: shellEnv(), timeout: 60_000 });
    expect(stdout).toMatch(/installed service-proxy-cli \S+ in /);
    const command = join(home, '.local', 'bin', 'service-proxy-cli');
    expect(existsSync(command)).toBe(true);

    const pipeline = await server.request('POST', '/pipelines', { token: owner.token, body: { name: 'install-check' } });
    const started = await server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: owner.token, body: {} });
    // run by the installed file alone: no tsx, no project folder
    const status = await run(command, ['status', '--json'], {
      cwd: home,
      env: shellEnv({ SERVICE_API_URL: server.url, SERVICE_TOKEN: started.body.token as string }),
    });
    expect(JSON.parse(status.stdout)).toMatchObject({ connected: true, api_url: server.url });

    // provisioning reads .tf files with a WebAssembly parser shipped beside the bundle
    writeFileSync(join(home, 'main.tf'), 'resource "service_realm" "ops" {\n  name = "ops"\n}\n');
    const plan = await run(command, ['provision', 'plan', '--dir', home, '--json'], {
      cwd: home,
      env: shellEnv({ SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token }),
    });
    expect(JSON.parse(plan.stdout)).toMatchObject({ summary: { create: 1, update: 0, replace: 0, delete: 0 } });

    // the Terraform provider loads its .proto files from beside the bundle and answers go-plugin's handshake
    const provider = spawn(command, ['terraform-provider'], { cwd: home, env: shellEnv({ TF_PLUGIN_MAGIC_COOKIE: MAGIC_COOKIE_VALUE }) });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        let err = '';
        provider.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
        });
        provider.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        provider.on('exit', (code) => reject(new Error(`the provider exited with ${code}: ${err}`)));
      });
      expect(line).toMatch(/^1\|6\|tcp\|127\.0\.0\.1:\d+\|grpc\|/);
    } finally {
      provider.kill('SIGKILL');
    }
  }, 120_000);

  it('refuses a tarball whose SHA-256 differs from the one in the script and installs nothing', async () => {
    const otherHome = mkdtempSync(join(tmpdir(), 'cli-install-bad-'));
    try {
      const script = await (await get('/cli/install.sh')).text();
      const tampered = script.replace(/^SHA256='[0-9a-f]{64}'$/m, `SHA256='${'0'.repeat(64)}'`);
      expect(tampered).not.toBe(script);
      writeFileSync(join(otherHome, 'install.sh'), tampered);
      const failure = await run('sh', [join(otherHome, 'install.sh')], { env: { PATH: process.env['PATH'] ?? '', HOME: otherHome } }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toContain('checksum mismatch');
      expect(existsSync(join(otherHome, '.local', 'bin', 'service-proxy-cli'))).toBe(false);
      expect(existsSync(join(otherHome, '.service-proxy-cli'))).toBe(false);
    } finally {
      rmSync(otherHome, { recursive: true, force: true });
    }
  }, 60_000);

  it('a Host header that is not a plain host never reaches the script', async () => {
    const { port } = new URL(server.url);
    const script = await new Promise<string>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/cli/install.sh', headers: { host: "x';touch${IFS}/tmp/pwned;'" } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
      request.end();
    });
    expect(script).not.toContain('pwned');
    expect(script).toMatch(/^API_ROOT='http:\/\/127\.0\.0\.1:\d+\/api\/v1'$/m);
  });
});
