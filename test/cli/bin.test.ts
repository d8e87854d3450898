/** `npx --no-install service-proxy-cli` from the project root runs the client (the bin shim, no build needed). */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cli-bin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs through npx from the project root, global flags after the command', async () => {
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'a.txt'), 'abc');
  const { stdout } = await promisify(execFile)('npx', ['--no-install', 'service-proxy-cli', 'ingest', 'scan', '--dir', dir, '--json'], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
  });
  expect(JSON.parse(stdout)).toMatchObject({ total_files: 1, total_bytes: 3, extensions: [{ extension: '.txt', files: 1, bytes: 3 }] });
}, 60_000);
