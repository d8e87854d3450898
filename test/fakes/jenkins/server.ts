/**
 * A fake Jenkins (node:http on 127.0.0.1, port 0) for the calls the jenkins
 * connector makes, with Jenkins' shapes: Basic auth with API tokens (401/403
 * HTML pages like Jenkins'), the JSON API with the `tree` parameter honoured
 * (nested fields and `{from,to}` ranges), folders as `/job/a/job/b`, build
 * permalinks, `consoleText`, the CSRF crumb bound to a session cookie,
 * `build`/`buildWithParameters` answering 201 with a queue item Location, and
 * a switch that answers the next request(s) 429 with Retry-After (a proxy's).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, stopServer, Throttle } from '../upstream.js';

export interface FakeCause {
  kind: 'user' | 'scm' | 'timer' | 'upstream';
  userId?: string;
  userName?: string;
  upstreamProject?: string;
  upstreamBuild?: number;
}

export interface FakeBuild {
  number: number;
  /** null while building */
  result: 'SUCCESS' | 'FAILURE' | 'UNSTABLE' | 'ABORTED' | null;
  timestamp: number;
  duration: number;
  causes: FakeCause[];
  console: string;
}

export interface FakeJob {
  name: string;
  kind: 'job' | 'folder' | 'pipeline';
  children?: FakeJob[];
  /** newest last (as they ran) */
  builds?: FakeBuild[];
  parameters?: string[];
}

export interface FakeJenkinsUser {
  token: string;
  /** Overall/Read; default true */
  read?: boolean;
}

export interface QueuedBuild {
  id: number;
  job: string;
  parameters: Record<string, string>;
  user: string;
}

export interface FakeJenkins {
  readonly url: string;
  readonly users: Map<string, FakeJenkinsUser>;
  readonly jobs: FakeJob[];
  readonly queue: QueuedBuild[];
  readonly requests: { method: string; path: string }[];
  /** false: CSRF protection off (the crumb issuer answers 404) */
  csrf: boolean;
  rateLimitNext(count?: number, seconds?: number): void;
  stop(): Promise<void>;
}

// ---- the `tree` parameter: `a,b[c,d]{0,10}` ----

interface TreeField {
  readonly name: string;
  readonly children: TreeField[] | null;
  readonly range: readonly [number, number] | null;
}

export function parseTree(tree: string): TreeField[] {
  let at = 0;
  const list = (): TreeField[] => {
    const fields: TreeField[] = [];
    for (;;) {
      let name = '';
      while (at < tree.length && /[A-Za-z0-9_$]/.test(tree[at] ?? '')) name += tree[at++];
      let children: TreeField[] | null = null;
      let range: [number, number] | null = null;
      if (tree[at] === '[') {
        at++;
        children = list();
        if (tree[at++] !== ']') throw new Error(`tree: expected ] at ${at}`);
      }
      if (tree[at] === '{') {
        const end = tree.indexOf('}', at);
        const [from = '', to] = tree.slice(at + 1, end).split(',');
        range = [from === '' ? 0 : Number(from), to === undefined ? Number(from) + 1 : to === '' ? Infinity : Number(to)];
        at = end + 1;
      }
      if (name === '') throw new Error(`tree: expected a field name at ${at}`);
      fields.push({ name, children, range });
      if (tree[at] !== ',') return fields;
      at++;
    }
  };
  const fields = list();
  if (at !== tree.length) throw new Error(`tree: unexpected ${tree[at]} at ${at}`);
  return fields;
}

function applyTree(value: unknown, fields: readonly TreeField[] | null): unknown {
  if (Array.isArray(value)) return value.map((item) => applyTree(item, fields));
  if (fields === null || typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  // Jenkins always includes _class
  const out: Record<string, unknown> = '_class' in source ? { _class: source['_class'] } : {};
  for (const field of fields) {
    if (!(field.name in source)) continue;
    let inner = source[field.name];
    if (field.range && Array.isArray(inner)) inner = inner.slice(field.range[0], field.range[1]);
    out[field.name] = applyTree(inner, field.children);
  }
  return out;
}

// ---- the model as Jenkins presents it ----

const CLASSES = {
  job: 'hudson.model.FreeStyleProject',
  pipeline: 'org.jenkinsci.plugins.workflow.job.WorkflowJob',
  folder: 'com.cloudbees.hudson.plugins.folder.Folder',
};

function causeJson(cause: FakeCause): Record<string, unknown> {
  switch (cause.kind) {
    case 'user':
      return {
        _class: 'hudson.model.Cause$UserIdCause',
        shortDescription: `Started by user ${cause.userName ?? cause.userId}`,
        userId: cause.userId,
        userName: cause.userName ?? cause.userId,
      };
    case 'scm':
      return { _class: 'hudson.triggers.SCMTrigger$SCMTriggerCause', shortDescription: 'Started by an SCM change' };
    case 'timer':
      return { _class: 'hudson.triggers.TimerTrigger$TimerTriggerCause', shortDescription: 'Started by timer' };
    case 'upstream':
      return {
        _class: 'hudson.model.Cause$UpstreamCause',
        shortDescription: `Started by upstream project "${cause.upstreamProject}" build number ${cause.upstreamBuild}`,
        upstreamBuild: cause.upstreamBuild,
        upstreamProject: cause.upstreamProject,
        upstreamUrl: `job/${cause.upstreamProject}/`,
      };
  }
}

function colorOf(job: FakeJob): string {
  const last = job.builds?.at(-1);
  if (!last) return 'notbuilt';
  const completed = [...(job.builds ?? [])].reverse().find((build) => build.result !== null);
  const base =
    completed?.result === 'SUCCESS'
      ? 'blue'
      : completed?.result === 'UNSTABLE'
        ? 'yellow'
        : completed?.result === 'ABORTED'
          ? 'aborted'
          : completed
            ? 'red'
            : 'notbuilt';
  return last.result === null ? `${base}_anime` : base;
}

export async function startFakeJenkins(): Promise<FakeJenkins> {
  let base = '';
  const throttle = new Throttle();
  let nextQueueId = 100;
  const sessions = new Map<string, string>(); // session cookie -> crumb
  const state = {
    users: new Map<string, FakeJenkinsUser>(),
    jobs: [] as FakeJob[],
    queue: [] as QueuedBuild[],
    requests: [] as { method: string; path: string }[],
    csrf: true,
  };

  const jobUrl = (fullName: string): string =>
    `${base}/${fullName
      .split('/')
      .map((name) => `job/${encodeURIComponent(name)}/`)
      .join('')}`;

  const buildJson = (fullName: string, build: FakeBuild): Record<string, unknown> => ({
    _class: 'hudson.model.FreeStyleBuild',
    number: build.number,
    result: build.result,
    building: build.result === null,
    timestamp: build.timestamp,
    duration: build.duration,
    displayName: `#${build.number}`,
    url: `${jobUrl(fullName)}${build.number}/`,
    actions: [{ _class: 'hudson.model.CauseAction', causes: build.causes.map(causeJson) }, {}, { _class: 'jenkins.metrics.impl.TimeInQueueAction' }],
  });

  const permalink = (job: FakeJob, name: string): FakeBuild | undefined => {
    const newestFirst = [...(job.builds ?? [])].reverse();
    switch (name) {
      case 'lastBuild':
        return newestFirst[0];
      case 'lastCompletedBuild':
        return newestFirst.find((build) => build.result !== null);
      case 'lastSuccessfulBuild':
        return newestFirst.find((build) => build.result === 'SUCCESS' || build.result === 'UNSTABLE');
      case 'lastStableBuild':
        return newestFirst.find((build) => build.result === 'SUCCESS');
      case 'lastFailedBuild':
        return newestFirst.find((build) => build.result === 'FAILURE');
      default:
        return job.builds?.find((build) => String(build.number) === name);
    }
  };

  const jobJson = (job: FakeJob, fullName: string): Record<string, unknown> => {
    if (job.kind === 'folder') {
      return {
        _class: CLASSES.folder,
        name: job.name,
        fullName,
        url: jobUrl(fullName),
        jobs: (job.children ?? []).map((child) => jobJson(child, `${fullName}/${child.name}`)),
      };
    }
    const link = (name: string) => {
      const build = permalink(job, name);
      return build ? buildJson(fullName, build) : null;
    };
    return {
      _class: CLASSES[job.kind],
      name: job.name,
      fullName,
      url: jobUrl(fullName),
      color: colorOf(job),
      buildable: true,
      builds: [...(job.builds ?? [])].reverse().map((build) => buildJson(fullName, build)),
      lastBuild: link('lastBuild'),
      lastCompletedBuild: link('lastCompletedBuild'),
      lastSuccessfulBuild: link('lastSuccessfulBuild'),
      lastStableBuild: link('lastStableBuild'),
      lastFailedBuild: link('lastFailedBuild'),
      property: job.parameters ? [{ _class: 'hudson.model.ParametersDefinitionProperty', parameterDefinitions: job.parameters.map((name) => ({ name })) }] : [],
    };
  };

  const findJob = (segments: readonly string[]): FakeJob | undefined => {
    let level = state.jobs;
    let found: FakeJob | undefined;
    for (const segment of segments) {
      found = level.find((job) => job.name === segment);
      if (!found) return undefined;
      level = found.children ?? [];
    }
    return found;
  };

  const page = (response: ServerResponse, status: number, title: string, text: string, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'text/html;charset=utf-8', ...headers });
    response.end(`<html><head><title>${title}</title></head><body><h2>HTTP ERROR ${status} ${title}</h2><p>${text}</p></body></html>`);
  };
  const json = (response: ServerResponse, value: unknown, url: URL, headers: Record<string, string> = {}, status = 200): void => {
    const tree = url.searchParams.get('tree');
    response.writeHead(status, { 'content-type': 'application/json;charset=utf-8', 'x-jenkins': '2.462.3', ...headers });
    response.end(JSON.stringify(tree === null ? value : applyTree(value, parseTree(tree))));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    state.requests.push({ method, path: url.pathname + url.search });
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');

    const retryAfter = throttle.take();
    if (retryAfter !== null) {
      response.writeHead(429, { 'retry-after': String(retryAfter), 'content-type': 'text/html' });
      response.end('<html><body>429 Too Many Requests</body></html>');
      return;
    }
    const [scheme, encoded = ''] = (request.headers.authorization ?? '').split(' ');
    const [username = '', token = ''] = Buffer.from(encoded, 'base64').toString('utf8').split(':');
    const user = scheme === 'Basic' ? state.users.get(username) : undefined;
    if (!user || user.token !== token) {
      page(response, 401, 'Unauthorized', `Invalid password/token for user: ${username}`, { 'www-authenticate': 'Basic realm="Jenkins"' });
      return;
    }
    if (user.read === false) {
      page(response, 403, 'Forbidden', `${username} is missing the Overall/Read permission`);
      return;
    }
    const path = url.pathname;
    if (method === 'GET' && path === '/me/api/json')
      return json(response, { _class: 'hudson.model.User', id: username, fullName: username.toUpperCase() }, url);
    if (method === 'GET' && path === '/api/json') {
      return json(
        response,
        { _class: 'hudson.model.Hudson', mode: 'NORMAL', nodeDescription: 'the fake', jobs: state.jobs.map((job) => jobJson(job, job.name)) },
        url,
      );
    }
    if (method === 'GET' && path === '/crumbIssuer/api/json') {
      if (!state.csrf) return page(response, 404, 'Not Found', 'Not Found');
      const session = randomBytes(8).toString('hex');
      const crumb = randomBytes(16).toString('hex');
      sessions.set(session, crumb);
      return json(response, { _class: 'hudson.security.csrf.DefaultCrumbIssuer', crumb, crumbRequestField: 'Jenkins-Crumb' }, url, {
        'set-cookie': `JSESSIONID.fake=${session}; Path=/; HttpOnly`,
      });
    }
    let match = /^\/queue\/item\/(\d+)\/api\/json$/.exec(path);
    if (method === 'GET' && match) {
      const item = state.queue.find((queued) => queued.id === Number(match?.[1]));
      if (!item) return page(response, 404, 'Not Found', 'Not Found');
      return json(
        response,
        {
          _class: 'hudson.model.Queue$WaitingItem',
          id: item.id,
          blocked: false,
          buildable: false,
          why: 'In the quiet period. Expires in 4.9 sec',
          params: Object.entries(item.parameters)
            .map(([name, value]) => `\n${name}=${value}`)
            .join(''),
          task: { _class: CLASSES.job, name: item.job.split('/').at(-1), url: jobUrl(item.job) },
          executable: null,
        },
        url,
      );
    }
    match = /^((?:\/job\/[^/]+)+)(?:\/([^/]+))?\/(api\/json|consoleText|build|buildWithParameters)$/.exec(path);
    if (!match) return page(response, 404, 'Not Found', 'Not Found');
    const segments = (match[1] ?? '').split('/job/').filter(Boolean).map(decodeURIComponent);
    const fullName = segments.join('/');
    const job = findJob(segments);
    if (!job) return page(response, 404, 'Not Found', 'Not Found');
    const buildRef = match[2];
    const action = match[3];

    if (action === 'build' || action === 'buildWithParameters') {
      if (method !== 'POST') return page(response, 405, 'Method Not Allowed', 'POST required');
      if (state.csrf) {
        const session = /JSESSIONID\.fake=([0-9a-f]+)/.exec(request.headers.cookie ?? '')?.[1];
        if (!session || sessions.get(session) !== request.headers['jenkins-crumb'])
          return page(response, 403, 'Forbidden', 'No valid crumb was included in the request');
      }
      if (action === 'build' && job.parameters) return page(response, 400, 'Bad Request', 'Nothing is submitted');
      const parameters = Object.fromEntries(new URLSearchParams(body));
      const id = nextQueueId++;
      state.queue.push({ id, job: fullName, parameters, user: username });
      response.writeHead(201, { location: `${base}/queue/item/${id}/` });
      response.end();
      return;
    }
    if (method !== 'GET') return page(response, 405, 'Method Not Allowed', 'GET required');
    if (buildRef === undefined) return action === 'api/json' ? json(response, jobJson(job, fullName), url) : page(response, 404, 'Not Found', 'Not Found');
    const build = permalink(job, buildRef);
    if (!build) return page(response, 404, 'Not Found', 'Not Found');
    if (action === 'consoleText') {
      response.writeHead(200, { 'content-type': 'text/plain;charset=utf-8' });
      response.end(build.console);
      return;
    }
    return json(response, buildJson(fullName, build), url);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  base = await listenOnLoopback(server);
  return Object.assign(state, {
    url: base,
    rateLimitNext: (count?: number, seconds?: number) => throttle.next(count, seconds),
    stop: () => stopServer(server),
  });
}
