/**
 * Starts the real service in this process on a free port with a fresh
 * DATA_DIR, and talks HTTP to it. Every integration suite uses this; a suite
 * that moves time passes `{ clock }`, one that restarts passes the same
 * `dataDir` and `JWT_SECRET` again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '../../gateway/app.js';
import { loadConfig } from '../../runtime/config.js';
import { createLogger } from '../../runtime/logger.js';
import type { RuntimeClock } from '../../runtime/supervisor.js';
import { ContractChecker, isJson } from './contract.js';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

export interface RequestOptions {
  readonly token?: string;
  /** serialized as JSON unless a string or Buffer */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /**
   * Skips the OpenAPI contract check of this one answer, giving why: only for a
   * test that deliberately provokes an answer the document does not describe.
   */
  readonly undocumented?: string;
}

export interface Session {
  readonly token: string;
  readonly user: { id: string; email: string; role: string };
  readonly organization: { id: string; name: string };
  readonly email: string;
  readonly password: string;
}

export interface TestServer {
  readonly url: string;
  readonly dataDir: string;
  readonly service: RunningService;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** registers a new organization with a fresh owner */
  register(organizationName?: string): Promise<Session>;
  stop(): Promise<void>;
}

/** the same user signed in again (a restarted server, or one whose token is wanted anew): the session with its new token */
export async function signIn<S extends Session>(server: TestServer, session: S): Promise<S> {
  const login = await server.request('POST', '/auth/login', { body: { email: session.email, password: session.password } });
  if (login.status !== 200) throw new Error(`sign-in of ${session.email}: ${login.status} ${login.text}`);
  return { ...session, token: login.body.token as string };
}

let counter = 0;

export async function request<T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (options.body !== undefined) {
    if (typeof options.body === 'string' || Buffer.isBuffer(options.body)) {
      body = typeof options.body === 'string' ? options.body : new Uint8Array(options.body);
    } else {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text.length > 0 && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export interface TestServerOptions {
  readonly dataDir?: string;
  /** every log line the server writes is pushed here (pass LOG_LEVEL in env; silent by default) */
  readonly logLines?: string[];
  /** the runtime clock (cron fires, run timeouts, retention, throttles); see `simulatedClock` in clock.ts */
  readonly clock?: RuntimeClock;
}

export async function startTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    // the suites' fakes listen on loopback; egress tests pass their own (empty or narrow) value
    EGRESS_ALLOW: '127.0.0.1,::1',
    ...env,
  });
  const lines = options.logLines;
  const logger = lines === undefined ? createLogger(config) : createLogger(config, { write: (line: string) => void lines.push(line) });
  const service = await startService(config, logger, options.clock ? { clock: options.clock } : {});
  // one checker per server, built from the live document, its validators compiled once per route and status
  let contract: Promise<ContractChecker> | null = null;
  const checked = async <T>(method: string, path: string, requestOptions?: RequestOptions): Promise<ApiResponse<T>> => {
    const response = await request<T>(service.url, method, path, requestOptions);
    if (requestOptions?.undocumented !== undefined || !isJson(response.headers.get('content-type')) || response.text.length === 0) return response;
    contract ??= request(service.url, 'GET', '/openapi.json').then((document) => new ContractChecker(document.body));
    (await contract).check(method, path, response.status, response.body);
    return response;
  };
  const server: TestServer = {
    url: service.url,
    dataDir,
    service,
    request: checked,
    register: async (organizationName) => {
      counter += 1;
      const email = `owner${counter}-${randomBytes(4).toString('hex')}@example.test`;
      const password = 'correct horse battery staple';
      const response = await server.request('POST', '/auth/register', {
        body: { email, password, organization_name: organizationName ?? `Org ${counter}` },
      });
      if (response.status !== 201) throw new Error(`register failed: ${response.status} ${response.text}`);
      return { ...(response.body as Omit<Session, 'email' | 'password'>), email, password };
    },
    stop: async () => {
      await service.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A server for `body` alone: started, handed over, stopped afterwards even when `body` throws. */
export async function withTestServer<T>(env: Record<string, string>, body: (server: TestServer) => Promise<T>): Promise<T>;
export async function withTestServer<T>(env: Record<string, string>, options: TestServerOptions, body: (server: TestServer) => Promise<T>): Promise<T>;
export async function withTestServer<T>(
  env: Record<string, string>,
  ...rest: [(server: TestServer) => Promise<T>] | [TestServerOptions, (server: TestServer) => Promise<T>]
): Promise<T> {
  const [options, body] = rest.length === 1 ? [{}, rest[0]] : rest;
  const server = await startTestServer(env, options);
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}
