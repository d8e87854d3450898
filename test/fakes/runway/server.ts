/**
 * A fake Runway API (plain HTTP on 127.0.0.1) with the real shapes the
 * connector uses: bearer API key, the `X-Runway-Version` header, POST
 * /v1/text_to_video | image_to_video | text_to_image answering `{ id }`,
 * GET /v1/tasks/:id (PENDING -> RUNNING -> SUCCEEDED as it is polled, or
 * FAILED with a failureCode), DELETE /v1/tasks/:id (204: cancels a running
 * task, deletes a finished one), GET /v1/organization, 400 bodies
 * `{ error, issues? }`, 429 with Retry-After and 5xx on request. Outputs are
 * served by the fake itself (`/outputs/<id>.<ext>?_jwt=...`, no bearer, like
 * the CDN's signed URLs), so a copy of them can be checked byte for byte.
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
  /** polls answered THROTTLED after PENDING, then RUNNING polls before the outcome */
  throttledPolls: number;
  runningPolls: number;
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
  /** the next `n` API requests answer this 5xx status */
  failNext(n: number, status?: number): void;
  /** how the next tasks behave (in order; then the defaults: 1 running poll, no throttling, success unless the prompt is blocked) */
  readonly nextTasks: Partial<Pick<FakeTask, 'throttledPolls' | 'runningPolls' | 'outcome'>>[];
  /** the bytes an output URL serves */
  outputBytes(id: string): Buffer;
  /** output downloads served, by task id */
  readonly downloads: Map<string, number>;
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
  const nextTasks: FakeRunwayServer['nextTasks'] = [];
  const downloads = new Map<string, number>();
  const failing = { left: 0, status: 500 };
  let baseUrl = '';
  const outputBytes = (id: string): Buffer => Buffer.from(`fake media output of ${id}\n`.repeat(64));

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
    const scripted = nextTasks.shift() ?? {};
    tasks.set(id, {
      id,
      status: 'PENDING',
      createdAt: new Date().toISOString(),
      outcome:
        scripted.outcome ??
        (prompt.includes(blockedWord)
          ? { status: 'FAILED', failure: 'Your input was flagged by our content moderation system.', failureCode: 'SAFETY.INPUT.TEXT' }
          : { status: 'SUCCEEDED', output: [`${baseUrl}/outputs/${id}.${extension}?_jwt=signed`] }),
      polls: 0,
      throttledPolls: scripted.throttledPolls ?? 0,
      runningPolls: scripted.runningPolls ?? 1,
      endpoint,
      body,
    });
    return send(res, 200, { id });
  }

  /** each poll moves the task on: PENDING, THROTTLED (if scripted), RUNNING, then its outcome */
  function view(task: FakeTask): Record<string, unknown> {
    task.polls += 1;
    const running = task.polls - 1 - task.throttledPolls;
    if ((task.status === 'PENDING' || task.status === 'THROTTLED') && task.polls >= 2) task.status = running >= 1 ? 'RUNNING' : 'THROTTLED';
    else if (task.status === 'RUNNING' && running > task.runningPolls && task.outcome.status !== 'RUNNING') task.status = task.outcome.status;
    const base = { id: task.id, status: task.status, createdAt: task.createdAt };
    if (task.status === 'RUNNING') return { ...base, progress: Math.min(running, task.runningPolls) / (task.runningPolls + 1) };
    if (task.status === 'SUCCEEDED' && task.outcome.status === 'SUCCEEDED') return { ...base, output: task.outcome.output };
    if (task.status === 'FAILED' && task.outcome.status === 'FAILED') return { ...base, failure: task.outcome.failure, failureCode: task.outcome.failureCode };
    return base;
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const output = url.pathname.match(/^\/outputs\/([^/.]+)\.(mp4|png)$/);
      if (output && req.method === 'GET') {
        // the CDN's signed URL: no bearer, gone once the task is deleted
        if (!tasks.has(output[1]!) || url.searchParams.get('_jwt') === null) return send(res, 403, { error: 'expired' });
        downloads.set(output[1]!, (downloads.get(output[1]!) ?? 0) + 1);
        res.writeHead(200, { 'content-type': output[2] === 'mp4' ? 'video/mp4' : 'image/png' });
        return res.end(outputBytes(output[1]!));
      }
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
      if (failing.left > 0) {
        failing.left -= 1;
        return send(res, failing.status, { error: 'An internal error occurred.' });
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
      if (task && req.method === 'DELETE') {
        const found = tasks.get(task[1]!);
        if (!found) return send(res, 404, { error: 'Task not found.' });
        if (found.status === 'SUCCEEDED' || found.status === 'FAILED') tasks.delete(found.id);
        else found.status = 'CANCELLED';
        res.writeHead(204);
        return res.end();
      }
      return send(res, 404, { error: 'Not found.' });
    })().catch((error: unknown) => send(res, 500, { error: String(error) }));
  });
  baseUrl = await listenOnLoopback(server);
  return Object.assign(state, {
    url: baseUrl,
    apiKey,
    tasks,
    requests,
    reachableImages,
    blockedWord,
    nextIds,
    throttleNext: (n?: number, retryAfterSeconds?: number) => throttle.next(n, retryAfterSeconds),
    failNext: (n: number, status = 500) => Object.assign(failing, { left: n, status }),
    nextTasks,
    outputBytes,
    downloads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
