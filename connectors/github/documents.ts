/**
 * The github source's Markdown files as documents (a RAG collection the
 * source feeds): each repository the source covers is read as one recursive
 * git tree of its default branch (one request per repository), and each
 * `.md`/`.markdown` blob is a document named `owner/repo/path` whose version
 * is its git blob sha, git's own content hash. The host reads only the blobs
 * whose sha changed (`GET /git/blobs/:sha`). Every request goes through the
 * egress guard (`net`) like the tools'.
 */
import { ToolError, type ConnectorPlugin, type NetPort, type SourceDocument } from '../contract.js';
import { githubClient, githubFailure } from './client.js';
import { githubConfigOf } from './config.js';
import { listSourceRepositories } from './repositories.js';

const MARKDOWN = /\.(md|markdown)$/i;
/** the most repositories one listing reads */
const MAX_REPOSITORIES = 200;
/** the most documents one listing answers (the rest is `truncated`) */
const MAX_DOCUMENTS = 5000;
/** a larger file is left out (the collection's own document limit) */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

interface TreeEntry {
  readonly path?: string;
  readonly type?: string;
  readonly sha?: string;
  readonly size?: number;
}

const isEmptyRepository = (error: unknown): boolean => (error as { status?: unknown } | null)?.status === 409;

async function list(raw: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<{ documents: SourceDocument[]; truncated: boolean }> {
  signal.throwIfAborted();
  const config = githubConfigOf(raw);
  try {
    const octokit = await githubClient(config, signal, net);
    const listed = await listSourceRepositories(octokit, config, signal, MAX_REPOSITORIES);
    let truncated = listed.truncated;
    const documents: SourceDocument[] = [];
    for (const repository of listed.repositories) {
      const [owner = '', repo = ''] = repository.full_name.split('/');
      const branch = repository.default_branch ?? 'main';
      let tree: { tree: TreeEntry[]; truncated: boolean };
      try {
        ({ data: tree } = await octokit.rest.git.getTree({ owner, repo, tree_sha: branch, recursive: 'true', request: { signal } }));
      } catch (error) {
        // an empty repository has no tree (409): it holds no documents
        if (isEmptyRepository(error)) continue;
        throw error;
      }
      truncated ||= tree.truncated;
      for (const entry of tree.tree) {
        if (entry.type !== 'blob' || entry.path === undefined || entry.sha === undefined || !MARKDOWN.test(entry.path)) continue;
        if ((entry.size ?? 0) > MAX_FILE_BYTES) continue;
        if (documents.length === MAX_DOCUMENTS) return { documents, truncated: true };
        documents.push({
          path: `${repository.full_name}/${entry.path}`,
          version: entry.sha,
          metadata: { repository: repository.full_name, path: entry.path, branch },
        });
      }
    }
    return { documents, truncated };
  } catch (error) {
    throw githubFailure(error, signal);
  }
}

async function read(raw: Readonly<Record<string, unknown>>, document: SourceDocument, signal: AbortSignal, net?: NetPort): Promise<Uint8Array> {
  signal.throwIfAborted();
  const [owner = '', repo = ''] = (document.metadata['repository'] ?? '').split('/');
  if (owner === '' || repo === '') throw new ToolError('invalid_request', `${document.path} names no repository`);
  try {
    const octokit = await githubClient(githubConfigOf(raw), signal, net);
    const { data } = await octokit.rest.git.getBlob({ owner, repo, file_sha: document.version, request: { signal } });
    return Buffer.from(data.content, data.encoding === 'base64' ? 'base64' : 'utf8');
  } catch (error) {
    throw githubFailure(error, signal);
  }
}

export const githubDocuments: NonNullable<ConnectorPlugin['documents']> = { list, read };
