/**
 * The routing core: request in, response out. Matching, feature gates, auth,
 * permission, validation, idempotency and the error envelope all happen here,
 * independent of the transport (gateway/uws-server.ts is the thin adapter).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuthContext } from '../runtime/auth/context.js';
import type { FeatureFlags } from '../runtime/config.js';
import { constantTimeEqual } from '../runtime/crypto.js';
import { ServiceError } from '../runtime/errors.js';
import { DEFAULT_MAX_JSON_DEPTH, findTooDeep } from '../runtime/json-depth.js';
import type { OrgId } from '../runtime/store/types.js';
import type { RequestAuditor } from './audit.js';
import { featureDisabled, featureOfPath } from './features.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from './http.js';
import type { IdempotencyGuard } from './idempotency.js';
import { loggedPath } from './log-path.js';
import { attachCursorScope } from './pagination.js';
import { DEFAULT_MAX_BODY_BYTES, type AnyRoute, type HandlerResult } from './route.js';
import { Router, type Match } from './router.js';

export const API_PREFIX = '/api/v1';

interface Authenticator {
  /** resolves the bearer credential or throws a 401 ServiceError */
  authenticate(authorization: string | undefined): Promise<AuthContext>;
}

export interface PipelineDeps {
  readonly routes: readonly AnyRoute[];
  readonly authenticator: Authenticator;
  readonly idempotency: IdempotencyGuard;
  /** 32 bytes: pagination cursors are signed with it (derived from the server secret) */
  readonly cursorKey: Uint8Array;
  readonly features: FeatureFlags;
  readonly logger: Logger;
  /** `MAX_JSON_DEPTH`: JSON bodies nesting deeper are refused before they are parsed. @default DEFAULT_MAX_JSON_DEPTH */
  readonly maxJsonDepth?: number;
  /** the audit log: every successful mutating call of a signed-in caller */
  readonly audit?: RequestAuditor;
  /** `WORKER_TOKEN`: the credential of worker routes (null: worker routes answer 401) */
  readonly workerToken?: string | null;
}

/** Public organization bucket for idempotency keys of unauthenticated creates (registration). */
const PUBLIC_SCOPE = 'public' as OrgId;

/** Whose idempotency records a request reads and writes: one principal never replays another's response. */
function principalOf(auth: AuthContext | null): string {
  if (auth === null) return 'anonymous';
  if (auth.apiKeyId !== null) return `api_key:${auth.apiKeyId}`;
  if (auth.pipelineRunId !== undefined) return `pipeline_run:${auth.pipelineRunId}`;
  return `user:${auth.userId}`;
}

function validationDetails(error: z.ZodError): Record<string, unknown> {
  return {
    issues: error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
  };
}

function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: string): z.output<T> | undefined {
  if (schema === undefined) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    const first = result.error.issues[0];
    const path = first && first.path.length > 0 ? `${first.path.map(String).join('.')}: ` : '';
    throw new ServiceError('validation_error', `invalid ${where}: ${path}${first?.message ?? 'bad value'}`, validationDetails(result.error));
  }
  return result.data;
}

const JSON_TYPE = /^application\/(.+\+)?json\b/i;

/** The structural bound of every JSON body, on the raw bytes, before anything parses or walks it. */
function boundDepth(body: Buffer, maxDepth: number): void {
  if (findTooDeep(body, maxDepth) !== null) {
    throw new ServiceError('payload_too_deep', `request body nests arrays/objects deeper than ${maxDepth} levels`, { max_depth: maxDepth });
  }
}

function readJson(request: HttpRequest, maxDepth: number): unknown {
  if (request.body.length === 0) return undefined;
  const type = request.headers['content-type'];
  if (type !== undefined && !JSON_TYPE.test(type)) {
    throw new ServiceError('unsupported_media_type', `expected application/json, got ${type}`);
  }
  boundDepth(request.body, maxDepth);
  try {
    return JSON.parse(request.body.toString('utf8')) as unknown;
  } catch (error) {
    throw new ServiceError('invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
}

function toResponse(result: HandlerResult): HttpResponse {
  return 'json' in result ? jsonResponse(result.status, result.json, result.headers) : result;
}

export function errorResponse(error: ServiceError): HttpResponse {
  return jsonResponse(error.status, error.toEnvelope(), { ...error.headers });
}

/**
 * A 401 of a bearer-protected route carries the RFC 6750 challenge, which
 * HTTP clients (and MCP clients, on /mcp) read to learn how to authenticate.
 */
function withBearerChallenge(error: unknown, credentialsGiven: boolean): never {
  if (!(error instanceof ServiceError) || error.status !== 401) throw error;
  // no credentials: the bare challenge; credentials that failed: say the token is the problem
  const challenge = credentialsGiven ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"';
  throw new ServiceError(error.code, error.message, error.details, { ...error.headers, 'www-authenticate': challenge });
}

/** Worker routes take `Bearer <WORKER_TOKEN>` only, compared in constant time on the raw bytes. */
function checkWorkerToken(expected: string | null, authorization: string | undefined): void {
  const challenge = { 'www-authenticate': 'Bearer realm="workers"' };
  if (expected === null) {
    throw new ServiceError('unauthorized', 'worker routes are off: WORKER_TOKEN is not configured on this server', undefined, challenge);
  }
  const match = /^Bearer (.+)$/.exec(authorization ?? '');
  if (!match || !constantTimeEqual(Buffer.from(match[1] ?? '', 'utf8'), Buffer.from(expected, 'utf8'))) {
    throw new ServiceError('unauthorized', 'worker routes need Authorization: Bearer <WORKER_TOKEN>', undefined, challenge);
  }
}

export class Pipeline {
  private readonly router: Router;

  constructor(private readonly deps: PipelineDeps) {
    this.router = new Router(deps.routes);
  }

  /** Which route a request goes to; the transport reads the body limit from it before reading the body. */
  match(method: string, path: string): Match {
    if (!path.startsWith(API_PREFIX + '/') && path !== API_PREFIX) return { kind: 'not_found' };
    return this.router.match(method, path.slice(API_PREFIX.length));
  }

  static maxBodyBytes(match: Match): number {
    return match.kind === 'found' ? (match.route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES) : DEFAULT_MAX_BODY_BYTES;
  }

  /** whether the route reads its body as it arrives (`request.bodyStream`) rather than whole */
  static streamsBody(match: Match): boolean {
    return match.kind === 'found' && match.route.bodyKind === 'stream';
  }

  /** Never throws: every failure becomes the error envelope. The transport adds `X-Request-Id`. */
  async handle(match: Match, request: HttpRequest): Promise<HttpResponse> {
    const started = performance.now();
    let response: HttpResponse;
    try {
      response = await this.dispatch(match, request);
    } catch (error) {
      if (error instanceof ServiceError) response = errorResponse(error);
      else {
        this.deps.logger.error(
          { err: error, request_id: request.requestId, method: request.method, ...loggedPath(match, API_PREFIX, request.path) },
          'unhandled error',
        );
        response = errorResponse(new ServiceError('internal_error', `internal error; quote request id ${request.requestId}`));
      }
    }
    this.logRequest(match, request, response.status, started);
    return response;
  }

  /**
   * One line per request: refusals (4xx) at info, server faults at error,
   * successes at debug (a busy server would otherwise log every call). The
   * path's secret segments are redacted; the query string is never logged.
   */
  private logRequest(match: Match, request: HttpRequest, status: number, started: number): void {
    const { logger } = this.deps;
    const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
    if (!logger.isLevelEnabled(level)) return;
    const fields = {
      request_id: request.requestId,
      method: request.method,
      ...loggedPath(match, API_PREFIX, request.path),
      status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
    };
    logger[level](fields, 'request');
  }

  private async dispatch(match: Match, request: HttpRequest): Promise<HttpResponse> {
    if (match.kind === 'not_found') {
      const feature = featureOfPath(request.path.slice(API_PREFIX.length));
      if (feature && !this.deps.features[feature]) throw featureDisabled(feature);
      throw new ServiceError('not_found', `no route for ${request.method} ${request.path}`);
    }
    if (match.kind === 'method_not_allowed') {
      throw new ServiceError(
        'method_not_allowed',
        `${request.method} is not allowed here`,
        { allowed: match.allowed },
        {
          allow: match.allowed.join(', '),
        },
      );
    }
    const { route } = match;
    if (route.feature && !this.deps.features[route.feature]) throw featureDisabled(route.feature);

    // authenticate before reading the body: an anonymous caller learns nothing about validation
    const auth =
      route.auth === 'bearer'
        ? await this.deps.authenticator
            .authenticate(request.headers['authorization'])
            .catch((error: unknown) => withBearerChallenge(error, request.headers['authorization'] !== undefined))
        : null;
    if (auth && route.auth === 'bearer' && route.permission && !auth.permissions.has(route.permission)) {
      throw new ServiceError('forbidden', `this action needs the permission "${route.permission}"`, {
        permission: route.permission,
      });
    }

    if (route.auth === 'worker') checkWorkerToken(this.deps.workerToken ?? null, request.headers['authorization']);

    // the table erases each route's schema types; the route's own handler type restores them
    const schemas: { params?: z.ZodType; query?: z.ZodType; body?: z.ZodType } = route;
    const params = parse(schemas.params, match.params, 'path parameter');
    const query = parse(schemas.query, Object.fromEntries(request.query), 'query');
    const maxJsonDepth = this.deps.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    // raw routes parse their own bodies (signed payloads, MCP, Slack): a JSON one is bounded here all the same
    if (route.bodyKind === 'raw' && route.ndjson !== true && request.body.length > 0 && JSON_TYPE.test(request.headers['content-type'] ?? '')) {
      boundDepth(request.body, maxJsonDepth);
    }
    const readsJson = route.bodyKind !== 'raw' && route.bodyKind !== 'stream';
    const json = readsJson ? readJson(request, maxJsonDepth) : undefined;
    // a route's fast check takes the large bodies it surely accepts; the schema parses the others (and names the error)
    const body: unknown = readsJson ? ((route.bodyFastPath?.(json) as unknown) ?? parse(schemas.body, json, 'body')) : undefined;

    const org = auth?.orgId ?? PUBLIC_SCOPE;
    attachCursorScope(query, this.deps.cursorKey, org, `${route.method} ${route.path}`);
    const run = async (): Promise<HttpResponse> => {
      const result =
        route.auth === 'bearer'
          ? await route.handler({ request, params, query, body, auth: auth as AuthContext })
          : await route.handler({ request, params, query, body });
      const response = toResponse(result);
      // a refusal threw before this point; an idempotent replay never runs this again
      if (auth !== null && this.deps.audit && response.status < 400) {
        await this.deps.audit.record({ route, auth, request, params, status: response.status, json: 'json' in result ? result.json : undefined });
      }
      return response;
    };
    if (route.creates) return this.deps.idempotency.run(org, principalOf(auth), request, run);
    return run();
  }
}
