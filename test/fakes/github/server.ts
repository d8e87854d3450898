/**
 * A fake GitHub REST API (node:http on 127.0.0.1, port 0) for the calls the
 * github connector makes, with GitHub's shapes: token and App (RS256 JWT ->
 * installation token) auth with the real 401 body, `X-OAuth-Scopes`,
 * `per_page`/`page` pagination with Link headers, the `{total_count,
 * workflow_runs}` envelope, issues that include pull requests, repository
 * files as git trees and blobs (contents.ts), and a switch that answers the
 * next request(s) 429 with Retry-After.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';
import { listenOnLoopback, stopServer, Throttle } from '../upstream.js';
import { gitBlob, gitTree, type RepoFiles } from './contents.js';

export interface FakeRepo {
  owner: string;
  name: string;
  private?: boolean;
  default_branch?: string;
  language?: string | null;
  ownerType?: 'User' | 'Organization';
}

export interface FakePull {
  number: number;
  title: string;
  user: string;
  state?: 'open' | 'closed';
  draft?: boolean;
  base?: string;
  head?: string;
  labels?: string[];
  created_at: string;
  updated_at: string;
}

export interface FakeCommit {
  sha: string;
  message: string;
  /** GitHub login, or null for an email that maps to no account */
  login: string | null;
  name: string;
  date: string;
}

export interface FakeIssue {
  number: number;
  title: string;
  user: string;
  state?: 'open' | 'closed';
  labels?: string[];
  assignees?: string[];
  comments?: number;
  created_at: string;
  updated_at: string;
  /** GitHub lists pull requests among issues: they carry a `pull_request` object */
  isPullRequest?: boolean;
}

export interface FakeRun {
  id: number;
  name: string;
  head_branch: string;
  head_sha: string;
  event: string;
  status: 'completed' | 'in_progress' | 'queued';
  conclusion: 'success' | 'failure' | 'cancelled' | null;
  actor: string;
  created_at: string;
}

export interface FakeGithubApp {
  appId: string;
  publicKey: KeyObject;
  /** installation id -> the installation token it hands out */
  installations: Record<string, string>;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

export interface FakeGithub {
  readonly url: string;
  /** token -> the user it belongs to and its classic scopes (undefined: a fine-grained token, no header) */
  readonly tokens: Map<string, { login: string; scopes?: string }>;
  readonly repos: FakeRepo[];
  readonly orgs: Set<string>;
  readonly pulls: Map<string, FakePull[]>;
  readonly commits: Map<string, FakeCommit[]>;
  readonly issues: Map<string, FakeIssue[]>;
  readonly runs: Map<string, FakeRun[]>;
  /** `owner/name` -> the files of its default branch (path -> content) */
  readonly files: Map<string, RepoFiles>;
  readonly comments: { repo: string; issue_number: number; body: string; id: number; user: string }[];
  readonly requests: RecordedRequest[];
  app?: FakeGithubApp;
  /** the next `count` requests answer 429 with `Retry-After: seconds` */
  rateLimitNext(count?: number, seconds?: number): void;
  stop(): Promise<void>;
}

const API_DOCS = 'https://docs.github.com/rest';

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body['message']));
  }
}

const notFound = (): HttpFailure => new HttpFailure(404, { message: 'Not Found', documentation_url: API_DOCS, status: '404' });

function userObject(base: string, login: string, type = 'User'): Record<string, unknown> {
  return { login, id: login.length * 1000 + login.charCodeAt(0), type, html_url: `${base.replace('/api/v3', '')}/${login}`, url: `${base}/users/${login}` };
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
}

export async function startFakeGithub(): Promise<FakeGithub> {
  const throttle = new Throttle();
  let nextCommentId = 9000;
  let base = '';

  const state: Omit<FakeGithub, 'url' | 'rateLimitNext' | 'stop'> & { app?: FakeGithubApp } = {
    tokens: new Map(),
    repos: [],
    orgs: new Set(),
    pulls: new Map(),
    commits: new Map(),
    issues: new Map(),
    runs: new Map(),
    files: new Map(),
    comments: [],
    requests: [],
  };

  const repoObject = (repo: FakeRepo): Record<string, unknown> => ({
    id: repo.name.length * 31 + repo.owner.length,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    owner: userObject(base, repo.owner, repo.ownerType ?? (state.orgs.has(repo.owner) ? 'Organization' : 'User')),
    private: repo.private ?? false,
    description: `${repo.name} service`,
    default_branch: repo.default_branch ?? 'main',
    language: repo.language ?? 'TypeScript',
    archived: false,
    pushed_at: '2026-11-20T10:00:00Z',
    html_url: `${base.replace('/api/v3', '')}/${repo.owner}/${repo.name}`,
  });

  const pullObject = (full: string, pr: FakePull): Record<string, unknown> => ({
    number: pr.number,
    title: pr.title,
    state: pr.state ?? 'open',
    draft: pr.draft ?? false,
    user: userObject(base, pr.user),
    base: { ref: pr.base ?? 'main' },
    head: { ref: pr.head ?? `feature-${pr.number}` },
    labels: (pr.labels ?? []).map((name, index) => ({ id: index + 1, name })),
    created_at: pr.created_at,
    updated_at: pr.updated_at,
    html_url: `https://github.com/${full}/pull/${pr.number}`,
  });

  /** who the Authorization header names, or a 401 */
  const authenticate = async (
    request: IncomingMessage,
  ): Promise<{ kind: 'user'; login: string; scopes?: string } | { kind: 'app' } | { kind: 'installation' }> => {
    const header = request.headers.authorization ?? '';
    const match = /^(?:token|bearer) (.+)$/i.exec(header);
    const bad = new HttpFailure(401, { message: 'Bad credentials', documentation_url: API_DOCS, status: '401' });
    if (!match?.[1]) throw new HttpFailure(401, { message: 'Requires authentication', documentation_url: API_DOCS, status: '401' });
    const credential = match[1];
    const user = state.tokens.get(credential);
    if (user) return { kind: 'user', ...user };
    if (state.app && Object.values(state.app.installations).includes(credential)) return { kind: 'installation' };
    if (state.app && credential.split('.').length === 3) {
      try {
        const { payload } = await jwtVerify(credential, state.app.publicKey, { algorithms: ['RS256'], issuer: state.app.appId });
        if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number' || payload.exp - payload.iat > 660) throw new Error('expiry too far');
        return { kind: 'app' };
      } catch {
        throw new HttpFailure(401, { message: "'Issuer' claim ('iss') must be an Integer", documentation_url: API_DOCS, status: '401' });
      }
    }
    throw bad;
  };

  const paginate = (url: URL, response: ServerResponse, items: readonly unknown[]): unknown[] => {
    const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n: number, rel: string): string => {
      const target = new URL(url.toString());
      target.searchParams.set('page', String(n));
      return `<${base}${target.pathname.replace(/^\/api\/v3/, '')}${target.search}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
    if (links.length > 0) response.setHeader('link', links.join(', '));
    return items.slice((page - 1) * perPage, page * perPage);
  };

  const repoOf = (owner: string, name: string): FakeRepo => {
    const repo = state.repos.find((candidate) => candidate.owner.toLowerCase() === owner.toLowerCase() && candidate.name.toLowerCase() === name.toLowerCase());
    if (!repo) throw notFound();
    return repo;
  };

  const byUpdated = (direction: string) => (a: { updated_at: string }, b: { updated_at: string }) =>
    direction === 'asc' ? a.updated_at.localeCompare(b.updated_at) : b.updated_at.localeCompare(a.updated_at);

  async function route(request: IncomingMessage, response: ServerResponse, url: URL, body: unknown): Promise<unknown> {
    const path = url.pathname.replace(/^\/api\/v3/, '');
    const method = request.method ?? 'GET';
    const who = await authenticate(request);
    if (who.kind === 'user' && who.scopes !== undefined) response.setHeader('x-oauth-scopes', who.scopes);
    let match: RegExpExecArray | null;

    if (method === 'GET' && path === '/user') {
      if (who.kind !== 'user') throw new HttpFailure(403, { message: 'Resource not accessible by integration', documentation_url: API_DOCS, status: '403' });
      return userObject(base, who.login);
    }
    if (method === 'GET' && path === '/app') {
      if (who.kind !== 'app') throw new HttpFailure(401, { message: 'A JSON web token could not be decoded', documentation_url: API_DOCS, status: '401' });
      return { id: Number(state.app?.appId), slug: 'agent-context', name: 'Agent Context' };
    }
    if (method === 'POST' && (match = /^\/app\/installations\/([^/]+)\/access_tokens$/.exec(path))) {
      if (who.kind !== 'app') throw new HttpFailure(401, { message: 'A JSON web token could not be decoded', documentation_url: API_DOCS, status: '401' });
      const token = state.app?.installations[match[1] ?? ''];
      if (token === undefined) throw notFound();
      response.statusCode = 201;
      return { token, expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions: { contents: 'read', pull_requests: 'write' } };
    }
    if (method === 'GET' && path === '/installation/repositories') {
      if (who.kind !== 'installation')
        throw new HttpFailure(403, { message: 'Resource not accessible by integration', documentation_url: API_DOCS, status: '403' });
      const all = state.repos.map(repoObject);
      return { total_count: all.length, repositories: paginate(url, response, all) };
    }
    if (method === 'GET' && path === '/user/repos') return paginate(url, response, state.repos.map(repoObject));
    if (method === 'GET' && (match = /^\/orgs\/([^/]+)$/.exec(path))) {
      if (!state.orgs.has(match[1] ?? '')) throw notFound();
      return { login: match[1], id: 1, type: 'Organization' };
    }
    if (method === 'GET' && (match = /^\/orgs\/([^/]+)\/repos$/.exec(path))) {
      if (!state.orgs.has(match[1] ?? '')) throw notFound();
      return paginate(url, response, state.repos.filter((repo) => repo.owner === match?.[1]).map(repoObject));
    }
    if (!(match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path))) throw notFound();
    const repo = repoOf(match[1] ?? '', match[2] ?? '');
    const full = `${repo.owner}/${repo.name}`;
    const rest = match[3] ?? '';
    const query = url.searchParams;

    if (method === 'GET' && rest === '') return repoObject(repo);
    if (method === 'GET' && rest === '/pulls') {
      const stateFilter = query.get('state') ?? 'open';
      const pulls = (state.pulls.get(full) ?? [])
        .filter((pr) => stateFilter === 'all' || (pr.state ?? 'open') === stateFilter)
        .filter((pr) => !query.get('base') || (pr.base ?? 'main') === query.get('base'))
        .sort(byUpdated(query.get('direction') ?? 'desc'));
      return paginate(
        url,
        response,
        pulls.map((pr) => pullObject(full, pr)),
      );
    }
    if (method === 'GET' && rest === '/commits') {
      const all = state.commits.get(full) ?? [];
      if (all.length === 0) throw new HttpFailure(409, { message: 'Git Repository is empty.', documentation_url: API_DOCS, status: '409' });
      const commits = all
        .filter((commit) => !query.get('author') || commit.login === query.get('author'))
        .filter((commit) => !query.get('since') || commit.date >= (query.get('since') ?? ''))
        .filter((commit) => !query.get('until') || commit.date <= (query.get('until') ?? ''))
        .sort((a, b) => b.date.localeCompare(a.date));
      return paginate(
        url,
        response,
        commits.map((commit) => ({
          sha: commit.sha,
          commit: {
            message: commit.message,
            author: { name: commit.name, email: `${commit.name.toLowerCase().replace(/\s+/g, '.')}@example.com`, date: commit.date },
          },
          author: commit.login === null ? null : userObject(base, commit.login),
          html_url: `https://github.com/${full}/commit/${commit.sha}`,
        })),
      );
    }
    if (method === 'GET' && rest === '/issues') {
      const stateFilter = query.get('state') ?? 'open';
      const labels = (query.get('labels') ?? '').split(',').filter(Boolean);
      const issues = (state.issues.get(full) ?? [])
        .filter((issue) => stateFilter === 'all' || (issue.state ?? 'open') === stateFilter)
        .filter((issue) => labels.every((label) => (issue.labels ?? []).includes(label)))
        .sort(byUpdated(query.get('direction') ?? 'desc'));
      return paginate(
        url,
        response,
        issues.map((issue) => ({
          number: issue.number,
          title: issue.title,
          state: issue.state ?? 'open',
          user: userObject(base, issue.user),
          assignees: (issue.assignees ?? []).map((login) => userObject(base, login)),
          labels: (issue.labels ?? []).map((name, index) => ({ id: index + 1, name })),
          comments: issue.comments ?? 0,
          created_at: issue.created_at,
          updated_at: issue.updated_at,
          html_url: `https://github.com/${full}/issues/${issue.number}`,
          ...(issue.isPullRequest ? { pull_request: { url: `${base}/repos/${full}/pulls/${issue.number}` } } : {}),
        })),
      );
    }
    if (method === 'GET' && rest === '/actions/runs') {
      const status = query.get('status');
      const runs = (state.runs.get(full) ?? [])
        .filter((run) => !status || run.status === status || run.conclusion === status)
        .filter((run) => !query.get('branch') || run.head_branch === query.get('branch'))
        .sort((a, b) => b.created_at.localeCompare(a.created_at));
      const page = paginate(
        url,
        response,
        runs.map((run) => ({ ...run, actor: userObject(base, run.actor), run_attempt: 1, html_url: `https://github.com/${full}/actions/runs/${run.id}` })),
      );
      return { total_count: runs.length, workflow_runs: page };
    }
    if (method === 'GET' && /^\/git\/trees\/[^/]+$/.test(rest)) {
      if (query.get('recursive') === null) throw new HttpFailure(422, { message: 'the fake serves recursive trees only', status: '422' });
      return gitTree(base, full, state.files.get(full) ?? {});
    }
    if (method === 'GET' && (match = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
      const blob = gitBlob(state.files.get(full) ?? {}, match[1] ?? '');
      if (blob === null) throw notFound();
      return blob;
    }
    if (method === 'POST' && (match = /^\/issues\/(\d+)\/comments$/.exec(rest))) {
      const scopes = who.kind === 'user' && who.scopes !== undefined ? who.scopes.split(',').map((scope) => scope.trim()) : null;
      // public_repo writes to public repositories only
      if (scopes !== null && !scopes.includes('repo') && (repo.private === true || !scopes.includes('public_repo'))) {
        throw new HttpFailure(403, { message: 'Resource not accessible by personal access token', documentation_url: API_DOCS, status: '403' });
      }
      const text = (body as { body?: unknown } | undefined)?.body;
      if (typeof text !== 'string' || text.length === 0)
        throw new HttpFailure(422, {
          message: 'Validation Failed',
          errors: [{ resource: 'IssueComment', code: 'missing_field', field: 'body' }],
          documentation_url: API_DOCS,
          status: '422',
        });
      const id = nextCommentId++;
      const user = who.kind === 'user' ? who.login : 'agent-context[bot]';
      state.comments.push({ repo: full, issue_number: Number(match[1]), body: text, id, user });
      response.statusCode = 201;
      return {
        id,
        body: text,
        user: userObject(base, user),
        html_url: `https://github.com/${full}/issues/${match[1]}#issuecomment-${id}`,
        created_at: new Date().toISOString(),
      };
    }
    throw notFound();
  }

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      const body = await readBody(request).catch(() => undefined);
      state.requests.push({ method: request.method ?? 'GET', path: url.pathname + url.search, authorization: request.headers.authorization, body });
      response.setHeader('content-type', 'application/json; charset=utf-8');
      response.setHeader('x-github-media-type', 'github.v3; format=json');
      const retryAfter = throttle.take();
      if (retryAfter !== null) {
        response.writeHead(429, {
          'retry-after': String(retryAfter),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + retryAfter),
        });
        response.end(
          JSON.stringify({
            message: 'API rate limit exceeded for user ID 1.',
            documentation_url: `${API_DOCS}/overview/rate-limits-for-the-rest-api`,
            status: '429',
          }),
        );
        return;
      }
      try {
        const answer = await route(request, response, url, body);
        response.end(JSON.stringify(answer));
      } catch (error) {
        const failure = error instanceof HttpFailure ? error : new HttpFailure(500, { message: String(error) });
        response.statusCode = failure.status;
        response.end(JSON.stringify(failure.body));
      }
    })();
  });
  base = `${await listenOnLoopback(server)}/api/v3`;

  const fake: FakeGithub = Object.assign(state, {
    url: base,
    rateLimitNext: (count?: number, seconds?: number) => throttle.next(count, seconds),
    stop: () => stopServer(server),
  });
  return fake;
}
