/** The worker routes, over HTTP with WORKER_TOKEN: all a worker process knows of the gateway. */
import type { QueueName } from '../runtime/jobs/queue.js';

export interface ClaimedJob {
  readonly id: string;
  readonly queue: QueueName;
  readonly kind: string;
  readonly org_id: string;
  readonly payload: Record<string, unknown>;
  readonly fence: string;
  readonly delivery: number;
  readonly expires_at: string;
}

export interface RegisteredWorker {
  readonly id: string;
  readonly lease_ttl_s: number;
}

/** a refusal of the gateway: `code` is the error envelope's code (`lease_lost`, `not_found` ...) */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class WorkerClient {
  constructor(
    private readonly apiUrl: string,
    private readonly token: string,
  ) {}

  register(body: { name: string | null; queues: readonly QueueName[]; slots: number }): Promise<RegisteredWorker> {
    return this.post('/workers/register', body);
  }

  heartbeat(workerId: string): Promise<unknown> {
    return this.post(`/workers/${workerId}/heartbeat`, undefined);
  }

  async claim(workerId: string, max: number, waitMs: number, signal?: AbortSignal): Promise<ClaimedJob[]> {
    const answer = await this.post<{ jobs: ClaimedJob[] }>(`/workers/${workerId}/claim`, { max, wait_ms: waitMs }, signal);
    return answer.jobs;
  }

  renew(job: ClaimedJob): Promise<unknown> {
    return this.post(`/workers/jobs/${encodeURIComponent(job.id)}/renew`, { fence: job.fence });
  }

  complete(job: ClaimedJob, result: Record<string, unknown>): Promise<unknown> {
    return this.post(`/workers/jobs/${encodeURIComponent(job.id)}/complete`, { fence: job.fence, result });
  }

  fail(job: ClaimedJob, error: string): Promise<unknown> {
    return this.post(`/workers/jobs/${encodeURIComponent(job.id)}/fail`, { fence: job.fence, error: error.slice(0, 4000) });
  }

  /** any other worker route (a job's context, tool calls, events) */
  post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.call('POST', path, body, signal);
  }

  /** a worker route read (a model turn's input) */
  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.call('GET', path, undefined, signal);
  }

  /** a worker route that answers bytes (a queued ingest body) */
  async getBytes(path: string, signal?: AbortSignal): Promise<Buffer> {
    const response = await this.send('GET', path, undefined, signal);
    if (!response.ok) return this.refusal(response);
    return Buffer.from(await response.arrayBuffer());
  }

  /** a worker route that takes bytes (a queued ingest's rows as NDJSON) and answers JSON */
  async postBytes<T>(path: string, body: Buffer, contentType: string, signal?: AbortSignal): Promise<T> {
    const response = await this.send('POST', path, { bytes: body, contentType }, signal);
    if (!response.ok) return this.refusal(response);
    return (await response.json()) as T;
  }

  private send(method: 'GET' | 'POST', path: string, raw: { bytes: Buffer; contentType: string } | undefined, signal?: AbortSignal): Promise<Response> {
    return fetch(this.apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(raw ? { 'content-type': raw.contentType } : {}) },
      body: raw ? new Blob([new Uint8Array(raw.bytes)]) : null,
      ...(signal ? { signal } : {}),
    });
  }

  private async refusal(response: Response): Promise<never> {
    const text = await response.text();
    const parsed = text.length > 0 ? (JSON.parse(text) as { error?: { code?: string; message?: string } }) : undefined;
    throw new GatewayError(response.status, parsed?.error?.code ?? 'http_error', parsed?.error?.message ?? `HTTP ${response.status}`);
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const response = await fetch(this.apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    const text = await response.text();
    const parsed = text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new GatewayError(response.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${response.status}`);
    }
    return parsed as T;
  }
}
