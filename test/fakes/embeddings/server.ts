/**
 * A fake of the OpenAI-compatible embeddings API: `POST /v1/embeddings`
 * (`{model, input: string | string[], encoding_format?}` -> `{object: 'list',
 * data: [{object: 'embedding', index, embedding}], model, usage}`), bearer
 * auth, deterministic vectors (vectors.ts), and a throttle a test switches on
 * (429 with Retry-After). `handleEmbeddings` also serves the fake LLM's
 * `/v1/embeddings`, so an organization whose llm_base_url is the fake LLM
 * embeds there too.
 */
import { createServer, type Server } from 'node:http';
import { listenOnLoopback, stopServer, Throttle } from '../upstream.js';
import { dimensionOfModel, fakeEmbedding } from './vectors.js';

export const FAKE_EMBEDDINGS_API_KEY = 'fake-embeddings-key-0123456789';

export interface EmbeddingsAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

const openAiError = (status: number, message: string) => ({
  error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: null },
});

/** What the fake answers an embeddings request (the body already parsed, null when it was not JSON). */
export function handleEmbeddings(body: unknown, authorization: string | undefined, apiKey: string, throttle?: Throttle): EmbeddingsAnswer {
  if (authorization !== `Bearer ${apiKey}`) return { status: 401, body: openAiError(401, 'Incorrect API key provided.') };
  const retryAfter = throttle?.take() ?? null;
  if (retryAfter !== null) return { status: 429, body: openAiError(429, 'Rate limit reached'), headers: { 'retry-after': String(retryAfter) } };
  const request = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : null;
  const model = request?.['model'];
  const input = request?.['input'];
  if (typeof model !== 'string' || model === '') return { status: 400, body: openAiError(400, 'model is required') };
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'string') ? input : null;
  if (texts === null || texts.length === 0 || texts.length > 2048) return { status: 400, body: openAiError(400, 'input must be a string or 1..2048 strings') };
  const dimension = dimensionOfModel(model);
  const tokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    status: 200,
    body: {
      object: 'list',
      data: texts.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dimension) })),
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

export interface FakeEmbeddingsServer {
  /** `http://127.0.0.1:<port>/v1`: what to configure as EMBEDDING_BASE_URL */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly throttle: Throttle;
  /** how many embeddings requests arrived, and how many texts they carried */
  readonly calls: { requests: number; texts: number };
  close(): Promise<void>;
}

export async function startFakeEmbeddingsServer(apiKey = FAKE_EMBEDDINGS_API_KEY): Promise<FakeEmbeddingsServer> {
  const throttle = new Throttle();
  const calls = { requests: 0, texts: 0 };
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        body = null;
      }
      const path = (request.url ?? '').split('?')[0];
      const answer: EmbeddingsAnswer =
        request.method === 'POST' && path === '/v1/embeddings'
          ? handleEmbeddings(body, request.headers.authorization, apiKey, throttle)
          : { status: 404, body: openAiError(404, `no route for ${request.method} ${path}`) };
      calls.requests += 1;
      const input = (body as { input?: unknown } | null)?.input;
      calls.texts += Array.isArray(input) ? input.length : 1;
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  const url = await listenOnLoopback(server);
  return { baseUrl: `${url}/v1`, apiKey, throttle, calls, close: () => stopServer(server) };
}
