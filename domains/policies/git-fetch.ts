/**
 * Fetches a policy source's branch with the system `git` and reads its
 * `*.rego` files straight from the object store (never from a checkout, so a
 * symlink in the repository cannot point the service at its own disk).
 *
 * git runs with an argument array (no shell), a fixed PATH, no user or system
 * config, no prompts, no redirects, only the transports the URL needs, and a
 * time budget. Network remotes connect to the address the egress guard
 * already judged (pinned: curl's resolve list for https, HostName for ssh).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitRemote } from './git-url.js';
import type { PolicySourceModule } from './types.js';

/** the budget of one sync (every git command together) */
const SYNC_TIMEOUT_MS = 120_000;
const MAX_FILES = 500;
const MAX_FILE_BYTES = 262_144;
const MAX_TOTAL_BYTES = 4_194_304;
/** where git and ssh are looked for: not the server's own PATH */
const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin';

export class GitSyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitSyncError';
  }
}

export interface GitFetchRequest {
  /** the source's own bare repository (created on first sync) */
  readonly repoDir: string;
  readonly remote: GitRemote;
  readonly branch: string;
  /** folder in the repository, '' = root */
  readonly path: string;
  readonly sshKey: string | null;
  /** the address the egress guard judged for a network remote */
  readonly address: string | null;
}

export interface FetchedModules {
  readonly commit: string;
  readonly modules: PolicySourceModule[];
}

const quote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

function git(args: readonly string[], env: NodeJS.ProcessEnv, deadline: number, maxBuffer = 16 * 1024 * 1024): Promise<string> {
  const timeout = Math.max(1, deadline - Date.now());
  return new Promise((resolve, reject) => {
    execFile('git', args, { env, timeout, killSignal: 'SIGKILL', maxBuffer, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      const killed = (error as { killed?: boolean }).killed === true;
      const detail = stderr
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .slice(-3)
        .join('; ');
      reject(new GitSyncError(killed ? `git did not finish within the sync's ${SYNC_TIMEOUT_MS / 1000} s` : `git failed: ${detail || error.message}`));
    });
  });
}

/** `-c` settings: only the transport this remote uses, no redirects, the guard's address pinned */
function transportConfig(remote: GitRemote, address: string | null): string[] {
  const config = ['protocol.allow=never', 'http.followRedirects=false', 'core.hooksPath=/dev/null'];
  if (remote.kind === 'local') config.push('protocol.file.allow=always');
  else config.push(`protocol.${remote.kind}.allow=always`);
  if (remote.kind === 'https' && address !== null) {
    config.push(`http.curloptResolve=${remote.host}:${remote.port}:${address.includes(':') ? `[${address}]` : address}`);
  }
  return config.flatMap((setting) => ['-c', setting]);
}

function sshCommand(remote: GitRemote, keyFile: string | null, knownHosts: string, address: string | null): string {
  const options = ['-o BatchMode=yes', '-o StrictHostKeyChecking=accept-new', `-o UserKnownHostsFile=${quote(knownHosts)}`, '-o ConnectTimeout=20'];
  if (keyFile !== null) options.push(`-i ${quote(keyFile)}`, '-o IdentitiesOnly=yes');
  // connect to the judged address; the host key stays filed under the name
  if (remote.kind === 'ssh' && address !== null) options.push(`-o HostName=${quote(address)}`, `-o HostKeyAlias=${quote(remote.host)}`);
  return `ssh ${options.join(' ')}`;
}

/** Fetches the branch (shallow) and returns its commit and the `*.rego` blobs under the path. */
export async function fetchRegoModules(request: GitFetchRequest): Promise<FetchedModules> {
  const deadline = Date.now() + SYNC_TIMEOUT_MS;
  const scratch = await mkdtemp(join(tmpdir(), 'policy-git-'));
  try {
    let keyFile: string | null = null;
    if (request.sshKey !== null) {
      keyFile = join(scratch, 'key');
      await writeFile(keyFile, request.sshKey.endsWith('\n') ? request.sshKey : `${request.sshKey}\n`, { mode: 0o600 });
    }
    const env: NodeJS.ProcessEnv = {
      PATH: SAFE_PATH,
      HOME: scratch,
      LANG: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_SSH_COMMAND: sshCommand(request.remote, keyFile, join(request.repoDir, 'known_hosts'), request.address),
    };
    await mkdir(request.repoDir, { recursive: true, mode: 0o700 });
    if (!existsSync(join(request.repoDir, 'HEAD'))) await git(['init', '--bare', '--quiet', request.repoDir], env, deadline);
    const repo = ['-C', request.repoDir, ...transportConfig(request.remote, request.address)];
    await git(
      [...repo, 'fetch', '--quiet', '--no-tags', '--depth=1', '--end-of-options', request.remote.url, `+refs/heads/${request.branch}:refs/heads/synced`],
      env,
      deadline,
    );
    const commit = (await git([...repo, 'rev-parse', '--verify', '--end-of-options', 'refs/heads/synced^{commit}'], env, deadline)).trim();
    return { commit, modules: await readModules(repo, commit, request.path, env, deadline) };
  } finally {
    // the key file goes with the scratch folder, whatever happened
    await rm(scratch, { recursive: true, force: true });
  }
}

async function readModules(repo: readonly string[], commit: string, path: string, env: NodeJS.ProcessEnv, deadline: number): Promise<PolicySourceModule[]> {
  const listing = await git([...repo, 'ls-tree', '-r', '-z', '--full-tree', '-l', commit, ...(path === '' ? [] : ['--', path])], env, deadline);
  const prefix = path === '' ? '' : `${path}/`;
  const blobs: { path: string; sha: string; size: number }[] = [];
  for (const entry of listing.split('\0')) {
    // `<mode> <type> <sha> <size>\t<path>`; symlinks (120000) and submodules are skipped
    const match = /^(100644|100755) blob ([0-9a-f]+)\s+(\d+)\t(.+)$/s.exec(entry);
    if (!match?.[4] || !match[4].startsWith(prefix) || !match[4].endsWith('.rego')) continue;
    blobs.push({ path: match[4].slice(prefix.length), sha: match[2] ?? '', size: Number(match[3]) });
  }
  if (blobs.length > MAX_FILES) throw new GitSyncError(`the folder holds ${blobs.length} .rego files; at most ${MAX_FILES} are synced`);
  const oversized = blobs.find((blob) => blob.size > MAX_FILE_BYTES);
  if (oversized) throw new GitSyncError(`${oversized.path} is over ${MAX_FILE_BYTES} bytes`);
  if (blobs.reduce((sum, blob) => sum + blob.size, 0) > MAX_TOTAL_BYTES) throw new GitSyncError(`the .rego files are over ${MAX_TOTAL_BYTES} bytes together`);
  const modules: PolicySourceModule[] = [];
  for (const blob of blobs.sort((a, b) => (a.path < b.path ? -1 : 1))) {
    modules.push({ path: blob.path, rego: await git([...repo, 'cat-file', 'blob', blob.sha], env, deadline) });
  }
  return modules;
}
