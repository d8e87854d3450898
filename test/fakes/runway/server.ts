/**
 * A fake Runway API (plain HTTP on 127.0.0.1) with the real shapes the
 * connector uses: bearer API key, the `X-Runway-Version` header, POST
 * /v1/text_to_video | image_to_video | text_to_image answering `{ id }`,
 * GET /v1/tasks/:id (PENDING -> RUNNING -> SUCCEEDED as it is polled, or
 * FAILED with a failureCode), GET /v1/organization, 400 bodies
 * `{ error, issues? }`, and 429 with Retry-After on request.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, Throttle } from '../upstream.js';

export interface FakeTask {
  id: string;
  status: 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  createdAt: string;
  /** how the task ends after its polls */
  outcome: { status: 'SUCCEEDED'; output: string[] } | { status: 'FAILED'; failure: string; failureCode: string } | { status: 'RUNNING' };
  polls: number;
  endpoint: string;
  body: Record<string, unknown>;
}

export interface FakeRunwayServer {
  readonly url: string;
  readonly apiKey: string;
  readonly tasks: Map<string, FakeTask>;
  readonly requests: { method: string; path: string; version: string | undefined; body: unknown }[];
  /** image URLs the fake "can fetch"; others answer 400 naming promptImage */
  readonly reachableImages: Set<string>;
  credits: number;
  /** prompts containing this word fail moderation (SAFETY.INPUT.TEXT) */
  readonly blockedWord: string;
  /** ids the next tasks get (a scripted agent names its job id in advance); random when empty */
  readonly nextIds: string[];
  throttleNext(n?: number, retryAfterSeconds?: number): void;
  close(): Promise<void>;
}

/** model -> the pixel ratios its API schema accepts, and credits per second (video) or per image */
const MODELS: Record<string, { endpoints: string[]; ratios: string[]; cost: number }> = {
  'gen4.5': { endpoints: ['text_to_video', 'image_to_video'], ratios: ['1280:720', '720:1280'], cost: 12 },
  gen4_turbo: { endpoints: ['image_to_video'], ratios: ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'], cost: 5 },
  gen3a_turbo: { endpoints: ['image_to_video'], ratios: ['1280:768', '768:1280'], cost: 5 },
  gen4_image: { endpoints: ['text_to_image'], ratios: ['1920:1080', '1080:1920', '1024:1024', '1360:768', '1080:1080'], cost: 8 },
};

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

export async function startFakeRunwayServer(apiKey = 'key_fake_runway'): Promise<FakeRunwayServer> {
  const tasks = new Map<string, FakeTask>();
  const requests: FakeRunwayServer['requests'] = [];
  const reachableImages = new Set<string>();
  const throttle = new Throttle();
  const blockedWord = 'forbidden';
  const nextIds: string[] = [];

  const state = {
    credits: 1000,
  };

  function create(endpoint: string, body: Record<string, unknown>, res: ServerResponse): void {
    const model = MODELS[String(body['model'])];
    if (!model || !model.endpoints.includes(endpoint)) {
      return send(res, 400, {
        error: 'Validation of body failed',
        issues: [{ code: 'invalid_union_discriminator', path: ['model'], message: `Invalid model for ${endpoint}` }],
      });
    }
    if (!model.ratios.includes(String(body['ratio']))) {
      return send(res, 400, {
        error: 'Validation of body failed',
        issues: [
          {
            code: 'invalid_enum_value',
            path: ['ratio'],
            message: `Invalid enum value. Expected ${model.ratios.map((r) => `'${r}'`).join(' | ')}, received '${String(body['ratio'])}'`,
          },
        ],
      });
    }
    if (endpoint === 'image_to_video' && !reachableImages.has(String(body['promptImage']))) {
      return send(res, 400, {
        error: 'Invalid asset URL',
        issues: [{ code: 'custom', path: ['promptImage'], message: 'The asset could not be fetched: the server answered 404' }],
      });
    }
    const cost = endpoint === 'text_to_image' ? model.cost : model.cost * Number(body['duration'] ?? 5);
    if (state.credits < cost) return send(res, 400, { error: 'You do not have enough credits to run this task.' });
    state.credits -= cost;
    const id = nextIds.shift() ?? randomUUID();
    const prompt = typeof body['promptText'] === 'string' ? body['promptText'] : '';
    const extension = endpoint === 'text_to_image' ? 'png' : 'mp4';
    tasks.set(id, {
      id,
      status: 'PENDING',
      createdAt: new Date().toISOString(),
      outcome: prompt.includes(blockedWord)
        ? { status: 'FAILED', failure: 'Your input was flagged by our content moderation system.', failureCode: 'SAFETY.INPUT.TEXT' }
        : { status: 'SUCCEEDED', output: [`https://dnznrvs05pmza.cloudfront.net/${id}.${extension}?_jwt=signed`] },
      polls: 0,
      endpoint,
      body,
    });
    return send(res, 200, { id });
  }

  /** each poll moves the task on: PENDING, RUNNING, then its outcome */
  function view(task: FakeTask): Record<string, unknown> {
    task.polls += 1;
    if (task.status === 'PENDING' && task.polls >= 2) task.status = 'RUNNING';
    else if (task.status === 'RUNNING' && task.polls >= 3 && task.outcome.status !== 'RUNNING') task.status = task.outcome.status;
    const base = { id: task.id, status: task.status, createdAt: task.createdAt };
    if (task.status === 'RUNNING') return { ...base, progress: 0.5 };
    if (task.status === 'SUCCEEDED' && task.outcome.status === 'SUCCEEDED') return { ...base, output: task.outcome.output };
    if (task.status === 'FAILED' && task.outcome.status === 'FAILED') return { ...base, failure: task.outcome.failure, failureCode: task.outcome.failureCode };
    return base;
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = await readBody(req);
      const version = req.headers['x-runway-version'] as string | undefined;
      requests.push({ method: req.method ?? 'GET', path: url.pathname, version, body });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(res, 401, { error: 'Incorrect API key provided. You can find your API key in the developer portal.' });
      if (version === undefined) return send(res, 400, { error: 'The X-Runway-Version header is required.' });
      const retryAfter = throttle.take();
      if (retryAfter !== null) {
        return send(res, 429, { error: 'You have exceeded the rate limit for this API key.' }, { 'retry-after': String(retryAfter) });
      }
      const path = url.pathname;
      if (path === '/v1/organization' && req.method === 'GET') {
        return send(res, 200, {
          creditBalance: state.credits,
          tier: {
            maxMonthlyCreditSpend: 100_000,
            models: Object.fromEntries(Object.keys(MODELS).map((m) => [m, { maxConcurrentGenerations: 2, maxDailyGenerations: 200 }])),
          },
          usage: { models: {} },
        });
      }
      const generation = path.match(/^\/v1\/(text_to_video|image_to_video|text_to_image)$/);
      if (generation && req.method === 'POST') return create(generation[1]!, body ?? {}, res);
      const task = path.match(/^\/v1\/tasks\/([^/]+)$/);
      if (task && req.method === 'GET') {
        const found = tasks.get(task[1]!);
        return found ? send(res, 200, view(found)) : send(res, 404, { error: 'Task not found.' });
      }
      return send(res, 404, { error: 'Not found.' });
    })().catch((error: unknown) => send(res, 500, { error: String(error) }));
  });
  return Object.assign(state, {
    url: await listenOnLoopback(server),
    apiKey,
    tasks,
    requests,
    reachableImages,
    blockedWord,
    nextIds,
    throttleNext: (n?: number, retryAfterSeconds?: number) => throttle.next(n, retryAfterSeconds),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
