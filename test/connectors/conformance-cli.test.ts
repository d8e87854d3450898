/**
 * The conformance kit as one command (connectors/conformance/cli.ts), run
 * the way an author runs it: a child process against a package.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const conformance = (...args: string[]) => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'connectors/conformance/cli.ts', ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: run.status, out: run.stdout, err: run.stderr };
};

describe('conformance command', () => {
  it('passes the template plugin (its config starts a fake of the system)', () => {
    const run = conformance('connectors/template/index.ts');
    expect(run.err).toBe('');
    expect(run.out).toContain('ok   validate() refuses invalidConfig with details');
    expect(run.out).toContain('ok   sample call 2 (create_note) returns a JSON result or a ToolError');
    expect(run.out).toContain('notes_template 0.1.0: 8 passed, 0 failed');
    expect(run.code).toBe(0);
  });

  it('fails a sloppy plugin, naming every problem, with exit code 1', () => {
    const run = conformance('test/fixtures/connectors/sloppy-plugin/index.ts');
    expect(run.code).toBe(1);
    expect(run.out).toContain('FAIL validate() refuses invalidConfig with details\n       validate() accepted invalidConfig');
    expect(run.out).toContain('FAIL a sample call for every tool\n       tools without a sample call: sloppy.unsampled');
    expect(run.out).toMatch(
      /FAIL sample call 1 \(throws_plain\) returns a JSON result or a ToolError\n\s+sloppy.throws_plain threw a plain Error instead of a ToolError: boom/,
    );
    expect(run.out).toMatch(
      /FAIL sample call 2 \(ignores_abort\) returns a JSON result or a ToolError\n\s+expected \{"result":\{"done":false\}\}, got \{"result":\{"done":true\}\}/,
    );
    expect(run.out).toContain('FAIL sample call 2 (ignores_abort) honours an aborted signal');
    expect(run.out).toContain('sloppy 0.0.1: 2 passed, 6 failed');
  });

  it('is a usage error (exit 2) without a package or a config', () => {
    expect(conformance().code).toBe(2);
    const noConfig = conformance('test/fixtures/plugins/echo');
    expect(noConfig.code).toBe(2);
    expect(noConfig.err).toContain('no conformance.config.ts');
  });
});
