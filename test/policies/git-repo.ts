/**
 * A real git remote for the policy source suites: a bare repository made with
 * `git init --bare` in a temp folder, and a working clone that commits and
 * pushes to it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

export interface GitRepo {
  /** the bare repository's path (a git_url with POLICY_GIT_ALLOW_LOCAL) */
  readonly bare: string;
  /** writes the files (path -> text), commits and pushes; the new commit's sha */
  commit(files: Record<string, string>, message?: string): string;
  /** a symlink in the next commit */
  link(path: string, target: string): void;
  remove(): void;
}

export function createGitRepo(branch = 'main'): GitRepo {
  const root = mkdtempSync(join(tmpdir(), 'policy-repo-'));
  const bare = join(root, 'origin.git');
  const work = join(root, 'work');
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], { cwd, env: ENV, encoding: 'utf8' }).trim();
  git(root, 'init', '--quiet', '--bare', `--initial-branch=${branch}`, bare);
  git(root, 'init', '--quiet', `--initial-branch=${branch}`, work);
  git(work, 'remote', 'add', 'origin', bare);
  return {
    bare,
    commit(files, message = 'policies') {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), text);
      }
      git(work, 'add', '-A');
      git(work, 'commit', '--quiet', '-m', message);
      git(work, 'push', '--quiet', 'origin', branch);
      return git(work, 'rev-parse', 'HEAD');
    },
    link(path, target) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      symlinkSync(target, join(work, path));
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
