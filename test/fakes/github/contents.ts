/**
 * The fake GitHub's repository contents, as the Git database API serves them:
 * `GET /repos/:owner/:repo/git/trees/:ref?recursive=1` (every blob with its
 * path, mode, size and git blob sha) and `GET /repos/:owner/:repo/git/blobs/:sha`
 * (base64 content). A blob's sha is git's own, `sha1("blob <size>\0" + bytes)`,
 * so it changes exactly when the content does.
 */
import { createHash } from 'node:crypto';

/** path -> content, for one repository */
export type RepoFiles = Record<string, string>;

export const gitBlobSha = (content: string): string => {
  const bytes = Buffer.from(content, 'utf8');
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
};

/** the tree of a repository's files; folders appear as `tree` entries like GitHub lists them */
export function gitTree(base: string, full: string, files: RepoFiles): Record<string, unknown> {
  const folders = new Set<string>();
  for (const path of Object.keys(files)) {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  const tree = [
    ...[...folders].map((path) => ({ path, mode: '040000', type: 'tree', sha: gitBlobSha(`tree ${path}`), url: `${base}/repos/${full}/git/trees/${path}` })),
    ...Object.entries(files).map(([path, content]) => {
      const sha = gitBlobSha(content);
      return { path, mode: '100644', type: 'blob', sha, size: Buffer.byteLength(content), url: `${base}/repos/${full}/git/blobs/${sha}` };
    }),
  ].sort((a, b) => a.path.localeCompare(b.path));
  return { sha: gitBlobSha(JSON.stringify(files)), url: `${base}/repos/${full}/git/trees/main`, tree, truncated: false };
}

/** a blob by its sha, or null when the repository holds none */
export function gitBlob(files: RepoFiles, sha: string): Record<string, unknown> | null {
  const content = Object.values(files).find((candidate) => gitBlobSha(candidate) === sha);
  if (content === undefined) return null;
  const bytes = Buffer.from(content, 'utf8');
  return { sha, node_id: `B_${sha.slice(0, 12)}`, size: bytes.length, content: bytes.toString('base64'), encoding: 'base64' };
}
