/**
 * A fake Vercel REST API (node:http on 127.0.0.1, port 0) for the calls the
 * vercel connector makes, with Vercel's shapes: Bearer tokens (a bad one is
 * 403 `{error:{code:'forbidden', invalidToken:true}}`), `teamId` scoping,
 * `/v6/deployments` paged with `pagination.next` -> `until`, `/v10/projects`
 * paged with `pagination.next` -> `from`, `/v13/deployments/:id`,
 * `/v3/deployments/:id/events` build logs, redeploy (`POST /v13/deployments`
 * with `deploymentId`), rollback (`POST /v1/projects/:id/rollback/:dpl`, 201
 * without a body), and a switch that answers the next request(s) 429.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, stopServer, Throttle } from '../upstream.js';

export interface FakeVercelProject {
  id: string;
  name: string;
  /** team id, or `user:<username>` for a personal project */
  owner: string;
  framework?: string | null;
  updatedAt: number;
  link?: { type: 'github' | 'gitlab'; org: string; repo: string; productionBranch: string };
}

export interface FakeVercelDeployment {
  uid: string;
  projectId: string;
  target: 'production' | null;
  state: 'READY' | 'ERROR' | 'BUILDING' | 'QUEUED' | 'CANCELED';
  created: number;
  creator: string;
  branch?: string;
  sha?: string;
  message?: string;
  errorCode?: string;
  errorMessage?: string;
  /** build output lines, each becomes a stdout (or stderr when it starts with "Error") event */
  log?: string[];
  redeployOf?: string;
}

export interface FakeVercel {
  readonly url: string;
  readonly tokens: Map<string, { username: string; teams: string[] }>;
  readonly teams: Set<string>;
  readonly projects: FakeVercelProject[];
  readonly deployments: FakeVercelDeployment[];
  readonly rollbacks: { projectId: string; deploymentId: string; description: string | null }[];
  readonly requests: { method: string; path: string }[];
  rateLimitNext(count?: number, seconds?: number): void;
  stop(): Promise<void>;
}

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: Record<string, unknown>,
  ) {
    super(String(error['message']));
  }
}

export async function startFakeVercel(): Promise<FakeVercel> {
  const throttle = new Throttle();
  let nextId = 1;
  const state = {
    tokens: new Map<string, { username: string; teams: string[] }>(),
    teams: new Set<string>(),
    projects: [] as FakeVercelProject[],
    deployments: [] as FakeVercelDeployment[],
    rollbacks: [] as { projectId: string; deploymentId: string; description: string | null }[],
    requests: [] as { method: string; path: string }[],
  };

  const projectOf = (deployment: FakeVercelDeployment): FakeVercelProject => state.projects.find((project) => project.id === deployment.projectId)!;
  const hostOf = (deployment: FakeVercelDeployment): string => `${projectOf(deployment).name}-${deployment.uid.slice(4, 12).toLowerCase()}.vercel.app`;
  const meta = (deployment: FakeVercelDeployment): Record<string, string> => ({
    ...(deployment.branch ? { githubCommitRef: deployment.branch } : {}),
    ...(deployment.sha ? { githubCommitSha: deployment.sha } : {}),
    ...(deployment.message ? { githubCommitMessage: deployment.message } : {}),
  });
  const listed = (deployment: FakeVercelDeployment): Record<string, unknown> => ({
    uid: deployment.uid,
    name: projectOf(deployment).name,
    url: hostOf(deployment),
    created: deployment.created,
    createdAt: deployment.created,
    buildingAt: deployment.created + 500,
    ready: deployment.state === 'READY' ? deployment.created + 60_000 : undefined,
    state: deployment.state,
    readyState: deployment.state,
    type: 'LAMBDAS',
    target: deployment.target,
    projectId: deployment.projectId,
    creator: { uid: `usr_${deployment.creator}`, username: deployment.creator, githubLogin: deployment.creator },
    inspectorUrl: `https://vercel.com/acme/${projectOf(deployment).name}/${deployment.uid.slice(4)}`,
    meta: meta(deployment),
  });
  const detail = (deployment: FakeVercelDeployment): Record<string, unknown> => ({
    id: deployment.uid,
    name: projectOf(deployment).name,
    url: hostOf(deployment),
    readyState: deployment.state,
    status: deployment.state,
    target: deployment.target,
    projectId: deployment.projectId,
    createdAt: deployment.created,
    creator: { uid: `usr_${deployment.creator}`, username: deployment.creator },
    meta: meta(deployment),
    inspectorUrl: `https://vercel.com/acme/${projectOf(deployment).name}/${deployment.uid.slice(4)}`,
    ...(deployment.state === 'ERROR'
      ? {
          errorCode: deployment.errorCode ?? 'BUILD_FAILED',
          errorMessage: deployment.errorMessage ?? 'Command "npm run build" exited with 1',
          errorStep: 'build',
        }
      : {}),
  });

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<unknown> => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    const query = url.searchParams;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};

    const auth = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!auth) throw new HttpFailure(403, { code: 'forbidden', message: 'The request is missing an authentication token', missingToken: true });
    const user = state.tokens.get(auth);
    if (!user) throw new HttpFailure(403, { code: 'forbidden', message: 'Not authorized', invalidToken: true });
    const teamId = query.get('teamId');
    if (teamId !== null && !user.teams.includes(teamId)) throw new HttpFailure(403, { code: 'forbidden', message: 'Not authorized' });
    const owner = teamId ?? `user:${user.username}`;
    const visible = (project: FakeVercelProject): boolean => project.owner === owner;
    const findProject = (idOrName: string): FakeVercelProject | undefined =>
      state.projects.find((project) => visible(project) && (project.id === idOrName || project.name === idOrName));
    const findDeployment = (idOrUrl: string): FakeVercelDeployment => {
      const found = state.deployments.find((deployment) => (deployment.uid === idOrUrl || hostOf(deployment) === idOrUrl) && visible(projectOf(deployment)));
      if (!found) throw new HttpFailure(404, { code: 'not_found', message: 'Deployment not found' });
      return found;
    };
    const path = url.pathname;
    let match: RegExpExecArray | null;

    if (method === 'GET' && path === '/v2/user')
      return { user: { id: `usr_${user.username}`, username: user.username, email: `${user.username}@example.com`, name: user.username } };
    if (method === 'GET' && (match = /^\/v2\/teams\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(match[1] ?? '');
      if (!state.teams.has(id)) throw new HttpFailure(404, { code: 'not_found', message: 'Team not found' });
      if (!user.teams.includes(id)) throw new HttpFailure(403, { code: 'forbidden', message: 'Not authorized' });
      return { id, slug: id.replace(/^team_/, ''), name: id };
    }
    if (method === 'GET' && path === '/v10/projects') {
      const limit = Math.min(100, Number(query.get('limit') ?? 20));
      const from = query.get('from');
      const search = query.get('search');
      const all = state.projects
        .filter(visible)
        .filter((project) => !search || project.name.includes(search))
        .filter((project) => from === null || project.updatedAt < Number(from))
        .sort((a, b) => b.updatedAt - a.updatedAt);
      const page = all.slice(0, limit);
      return {
        projects: page.map((project) => ({
          id: project.id,
          name: project.name,
          accountId: owner,
          framework: project.framework ?? null,
          updatedAt: project.updatedAt,
          createdAt: project.updatedAt - 1e9,
          link: project.link ?? null,
        })),
        pagination: { count: page.length, next: all.length > limit ? (page.at(-1)?.updatedAt ?? null) : null, prev: null },
      };
    }
    if (method === 'GET' && path === '/v6/deployments') {
      const limit = Math.min(100, Number(query.get('limit') ?? 20));
      const project = query.get('projectId');
      const projectId = project === null ? null : (findProject(project)?.id ?? '-');
      const states = query.get('state')?.split(',') ?? null;
      const until = query.get('until');
      const since = query.get('since');
      const all = state.deployments
        .filter((deployment) => visible(projectOf(deployment)))
        .filter((deployment) => projectId === null || deployment.projectId === projectId)
        .filter((deployment) => !query.get('target') || (deployment.target ?? 'preview') === query.get('target'))
        .filter((deployment) => states === null || states.includes(deployment.state))
        .filter((deployment) => until === null || deployment.created < Number(until))
        .filter((deployment) => since === null || deployment.created > Number(since))
        .sort((a, b) => b.created - a.created);
      const page = all.slice(0, limit);
      return {
        deployments: page.map(listed),
        pagination: { count: page.length, next: all.length > limit ? (page.at(-1)?.created ?? null) : null, prev: page[0]?.created ?? null },
      };
    }
    if (method === 'GET' && (match = /^\/v13\/deployments\/([^/]+)$/.exec(path))) return detail(findDeployment(decodeURIComponent(match[1] ?? '')));
    if (method === 'GET' && (match = /^\/v3\/deployments\/([^/]+)\/events$/.exec(path))) {
      const deployment = findDeployment(decodeURIComponent(match[1] ?? ''));
      const events = [
        {
          type: 'delimiter',
          created: deployment.created,
          payload: { id: 'e0', date: deployment.created, text: 'Build machine configuration: 4 cores', deploymentId: deployment.uid },
        },
        {
          type: 'command',
          created: deployment.created + 1,
          payload: { id: 'e1', date: deployment.created + 1, text: 'Running "npm run build"', deploymentId: deployment.uid },
        },
        ...(deployment.log ?? []).map((line, index) => ({
          type: line.startsWith('Error') ? 'stderr' : 'stdout',
          created: deployment.created + 2 + index,
          payload: { id: `e${index + 2}`, date: deployment.created + 2 + index, text: line, deploymentId: deployment.uid, serial: String(index) },
        })),
      ];
      return events;
    }
    if (method === 'POST' && path === '/v13/deployments') {
      if (typeof body['deploymentId'] !== 'string')
        throw new HttpFailure(400, { code: 'bad_request', message: 'Invalid request: missing required property `files`.' });
      const original = findDeployment(body['deploymentId']);
      if (body['name'] !== projectOf(original).name) throw new HttpFailure(400, { code: 'bad_request', message: 'The name does not match the deployment' });
      const created: FakeVercelDeployment = {
        ...original,
        uid: `dpl_NEW${String(nextId++).padStart(5, '0')}`,
        target: body['target'] === 'production' ? 'production' : null,
        state: 'QUEUED',
        created: Date.now(),
        creator: user.username,
        redeployOf: original.uid,
        log: [],
      };
      state.deployments.push(created);
      return { ...detail(created), status: 'QUEUED' };
    }
    if (method === 'POST' && (match = /^\/v1\/projects\/([^/]+)\/rollback\/([^/]+)$/.exec(path))) {
      const project = findProject(decodeURIComponent(match[1] ?? ''));
      if (!project) throw new HttpFailure(404, { code: 'not_found', message: 'Project not found' });
      const deployment = findDeployment(decodeURIComponent(match[2] ?? ''));
      if (deployment.projectId !== project.id || deployment.target !== 'production' || deployment.state !== 'READY') {
        throw new HttpFailure(400, { code: 'invalid_rollback_target', message: 'Only a READY production deployment of this project can be rolled back to' });
      }
      state.rollbacks.push({ projectId: project.id, deploymentId: deployment.uid, description: query.get('description') });
      response.statusCode = 201;
      return undefined;
    }
    throw new HttpFailure(404, { code: 'not_found', message: 'The requested path was not found' });
  };

  const server = createServer((request, response) => {
    state.requests.push({ method: request.method ?? 'GET', path: request.url ?? '/' });
    const retryAfter = throttle.take();
    if (retryAfter !== null) {
      const reset = Math.ceil(Date.now() / 1000) + retryAfter;
      response.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(retryAfter),
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(reset),
      });
      response.end(
        JSON.stringify({ error: { code: 'rate_limited', message: 'Rate limit exceeded', limit: { remaining: 0, reset, resetMs: reset * 1000, total: 100 } } }),
      );
      request.resume();
      return;
    }
    handle(request, response).then(
      (answer) => {
        if (answer === undefined) {
          response.end();
          return;
        }
        response.setHeader('content-type', 'application/json; charset=utf-8');
        response.end(JSON.stringify(answer));
      },
      (error: unknown) => {
        const failure = error instanceof HttpFailure ? error : new HttpFailure(500, { code: 'internal_server_error', message: String(error) });
        response.writeHead(failure.status, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify({ error: failure.error }));
      },
    );
  });
  return Object.assign(state, {
    url: await listenOnLoopback(server),
    rateLimitNext: (count?: number, seconds?: number) => throttle.next(count, seconds),
    stop: () => stopServer(server),
  });
}
