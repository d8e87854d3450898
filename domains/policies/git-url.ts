/**
 * A policy source's git_url, read once: which transport it uses and which host
 * the egress guard must judge. Only `https://`, `ssh://` and scp-like
 * `user@host:path` reach the network; `file://` and absolute local paths are
 * for tests and single-tenant setups (POLICY_GIT_ALLOW_LOCAL), since they read
 * the server's own disk.
 */
import { ServiceError } from '../../runtime/errors.js';

export type GitRemote =
  { readonly kind: 'https' | 'ssh'; readonly url: string; readonly host: string; readonly port: number } | { readonly kind: 'local'; readonly url: string };

const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(?!\/\/)(\S+)$/;
/** a branch name git accepts and that cannot be read as an option or a ref expression */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!\/)[A-Za-z0-9._/-]+(?<![./])$/;
/** a relative folder: no `..`, no leading `/` or `-` */
const FOLDER = /^(?![-/])(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._/-]*$/;

const refuse = (field: string, message: string): never => {
  throw new ServiceError('validation_error', `${field}: ${message}`, { field });
};

const bare = (host: string): string => (host.startsWith('[') ? host.slice(1, -1) : host).toLowerCase();

/** @throws 400 validation_error naming git_url */
export function parseGitUrl(raw: string, allowLocal: boolean): GitRemote {
  if (raw.startsWith('-') || /[\s\u0000-\u001f\u007f]/.test(raw)) refuse('git_url', 'must not start with "-" or hold spaces or control characters');
  const scp = SCP_LIKE.exec(raw);
  if (scp?.[2] !== undefined) return { kind: 'ssh', url: raw, host: bare(scp[2]), port: 22 };
  if (raw.startsWith('/')) {
    if (!allowLocal) refuse('git_url', 'local repositories are not allowed on this server (POLICY_GIT_ALLOW_LOCAL)');
    return { kind: 'local', url: raw };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('git_url', 'must be an https:// or ssh:// URL or user@host:path');
  }
  if (url.protocol === 'file:') {
    if (!allowLocal) refuse('git_url', 'local repositories are not allowed on this server (POLICY_GIT_ALLOW_LOCAL)');
    return { kind: 'local', url: raw };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'ssh:') refuse('git_url', 'must be an https:// or ssh:// URL or user@host:path');
  if (url.hostname === '') refuse('git_url', 'names no host');
  // a token in the URL would be stored and shown in the clear: private repositories use git_ssh_key
  if (url.password !== '' || (url.protocol === 'https:' && url.username !== '')) refuse('git_url', 'must not carry credentials (use ssh with git_ssh_key)');
  const kind = url.protocol === 'https:' ? 'https' : 'ssh';
  const port = url.port === '' ? (kind === 'https' ? 443 : 22) : Number(url.port);
  return { kind, url: raw, host: bare(url.hostname), port };
}

/** @throws 400 validation_error naming git_branch */
export function checkBranch(branch: string): string {
  if (branch.length > 200 || !BRANCH.test(branch)) refuse('git_branch', 'is not a valid branch name');
  return branch;
}

/** The folder normalized to `a/b` ('' = the root). @throws 400 validation_error naming git_path */
export function normalizeGitPath(path: string): string {
  const trimmed = path.replace(/^\.\/?/, '').replace(/\/+$/, '');
  if (trimmed.length > 500 || !FOLDER.test(trimmed) || trimmed.includes('//'))
    refuse('git_path', 'must be a relative folder without ".." (empty: the repository root)');
  return trimmed;
}
