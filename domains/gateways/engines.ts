/**
 * What every engine type does for the dispatcher and the health probe: probe,
 * start a dispatch, and (engines that are polled) read its state. Each HTTP
 * call goes through the egress guard; a transport failure (connection
 * refused, timeout, 5xx) is an `EngineDownError`, which the dispatcher
 * answers as 503 `sidecar_unavailable`.
 */
import { ServiceError } from '../../runtime/errors.js';
import { egressRefusalOf, type EgressGuard } from '../../runtime/net/egress.js';
import type { GatewayDoc } from './documents.js';

/** one call to an engine waits at most this long */
const ENGINE_CALL_TIMEOUT_MS = 10_000;
const USER_AGENT = 'agent-context-service-gateways/1';

/** The engine is unreachable or failing at the transport level. */
export class EngineDownError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineDownError';
  }
}

/** What the dispatcher hands an engine to start. */
export interface DispatchStart {
  readonly dispatchId: string;
  readonly workflowRunId: string;
  readonly stepId: string;
  readonly input: Record<string, unknown>;
  /** where a webhook engine posts its signed completion (absolute) */
  readonly callbackUrl: string;
  /** Unix milliseconds on the runtime clock */
  readonly nowMs: number;
}

export interface Outcome {
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly output: Record<string, unknown> | string | null;
  readonly error?: string;
}

/** started (the engine's ref, to poll or to wait for its callback), or settled at once */
export type StartResult = { readonly kind: 'started'; readonly externalRef: string } | { readonly kind: 'settled'; readonly outcome: Outcome };

export interface Engine {
  /** null when healthy, else why not; never throws */
  probe(gateway: GatewayDoc, apiKey: string | null): Promise<string | null>;
  /** @throws EngineDownError when the engine is down; ServiceError `egress_refused` when the guard refuses it */
  start(gateway: GatewayDoc, apiKey: string | null, request: DispatchStart): Promise<StartResult>;
  /** engines that are polled: the outcome, or null while it runs. @throws EngineDownError */
  poll?(gateway: GatewayDoc, apiKey: string | null, externalRef: string): Promise<Outcome | null>;
  /** engines that can stop started work: asks it to (best effort). @throws EngineDownError */
  cancel?(gateway: GatewayDoc, apiKey: string | null, externalRef: string, dispatchId: string): Promise<void>;
}

export interface EngineAnswer {
  readonly status: number;
  readonly json: unknown;
  readonly text: string;
}

/**
 * One HTTP call through the egress guard. 5xx, network errors and timeouts
 * throw EngineDownError; a refusal throws 422 `egress_refused`; any other
 * status is returned for the engine to read.
 */
export async function callEngine(
  egress: EgressGuard,
  url: string,
  init: { readonly method: 'GET' | 'POST'; readonly headers?: Record<string, string>; readonly body?: Buffer | string },
): Promise<EngineAnswer> {
  let response: Response;
  try {
    response = await egress.fetch(url, {
      method: init.method,
      headers: { 'user-agent': USER_AGENT, accept: 'application/json', ...init.headers },
      ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : new Uint8Array(init.body) }),
      // a redirect is an answer, not something to follow with credentials
      redirect: 'manual',
      signal: AbortSignal.timeout(ENGINE_CALL_TIMEOUT_MS),
    });
  } catch (error) {
    const refusal = egressRefusalOf(error);
    if (refusal !== null) throw new ServiceError('egress_refused', `base_url: ${refusal.message}`, { field: 'base_url', ...refusal.refusal });
    if (error instanceof DOMException && error.name === 'TimeoutError') throw new EngineDownError(`no answer within ${ENGINE_CALL_TIMEOUT_MS} ms`);
    throw new EngineDownError(networkError(error));
  }
  const text = await response.text().catch(() => '');
  if (response.status >= 500) throw new EngineDownError(`engine answered ${response.status}`);
  let json: unknown = null;
  try {
    json = text.length > 0 ? (JSON.parse(text) as unknown) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

/** A probe's verdict on a call: null when healthy, else the reason. */
export async function probeVerdict(call: () => Promise<EngineAnswer>, healthy: (answer: EngineAnswer) => boolean): Promise<string | null> {
  try {
    const answer = await call();
    return healthy(answer) ? null : `engine answered ${answer.status}`;
  } catch (error) {
    if (error instanceof EngineDownError) return error.message;
    if (error instanceof ServiceError) return `${error.code}: ${error.message}`;
    return 'probe failed';
  }
}

/** the message a 4xx answer carries (grpc-gateway `{code, message}`, or ours `{error: {message}}`), bounded */
export function answerMessage(answer: EngineAnswer): string {
  const body = answer.json as { message?: unknown; error?: unknown } | null;
  const nested =
    body !== null && typeof body === 'object' && typeof body.error === 'object' && body.error !== null
      ? (body.error as { message?: unknown }).message
      : undefined;
  const message = typeof body?.message === 'string' ? body.message : typeof nested === 'string' ? nested : answer.text;
  return `engine answered ${answer.status}${message ? `: ${message.slice(0, 500)}` : ''}`;
}

/** fetch wraps the socket error in `cause`: show the code (ECONNREFUSED ...), never the URL */
function networkError(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? `network error ${cause.code}` : 'network error';
}

/** the URL of `path` under a base URL that may carry a path prefix of its own */
export const joinUrl = (base: string, path: string): string => base.replace(/\/+$/, '') + path;
