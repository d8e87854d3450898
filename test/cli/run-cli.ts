/** Runs the real `service-proxy-cli` (the TypeScript entry through tsx) as a subprocess. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI_ENTRY = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** by absolute URL: the child may run in another working directory, where `tsx` would not resolve */
export const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], options: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string } = {}): Promise<CliResult> {
  // the child sees only what the test gives it: no SERVICE_* leaking in from the outer shell
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' };
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
      cwd: options.cwd ?? PROJECT_ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
