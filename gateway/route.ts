/**
 * A route is data: method, path, auth, the zod schemas of its inputs and
 * output, and a handler. The same schemas validate requests and generate
 * `/openapi.json`, so there is one source of truth.
 */
import type { z } from 'zod';
import type { AuthContext } from '../runtime/auth/context.js';
import type { Permission } from '../runtime/auth/permissions.js';
import type { FeatureFlags } from '../runtime/config.js';
import type { HttpRequest, HttpResponse } from './http.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** 1 MiB: JSON resource bodies; routes with bigger bodies (ingest, hooks) say so. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

interface RouteContext<P, Q, B> {
  readonly request: HttpRequest;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
}

interface AuthedContext<P, Q, B> extends RouteContext<P, Q, B> {
  readonly auth: AuthContext;
}

/** What a handler returns: a full response, or `{status, body}` to serialize as JSON. */
export type HandlerResult = HttpResponse | { readonly status: number; readonly json: unknown; readonly headers?: Record<string, string> };

interface RouteBase<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  readonly method: Method;
  /** relative to /api/v1, with `:name` parameters */
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  readonly params?: P;
  /** path parameters that are credentials (ingest tokens, trigger ids): logs show `[redacted]` in their place */
  readonly secretParams?: readonly string[];
  readonly query?: Q;
  readonly body?: B;
  /**
   * A faster check of large bodies: the body exactly as `body` would give it
   * when it surely passes, else undefined (then `body` parses it and names
   * the error). It must never accept what `body` refuses.
   */
  readonly bodyFastPath?: (value: unknown) => z.output<B> | undefined;
  /** documents the success body in /openapi.json */
  readonly response?: z.ZodType;
  /** @default 200 */
  readonly status?: number;
  /** other statuses that answer a JSON body other than the error envelope (e.g. /health's 503 report) */
  readonly responses?: Readonly<Record<number, z.ZodType>>;
  /**
   * Error statuses the handler answers beyond those the definition implies
   * (bearer 401, permission 403, params 404, body or query 400, creates 409,
   * a body 413, feature 404), so /openapi.json lists each route's real errors.
   */
  readonly errors?: readonly number[];
  /** a create: honours Idempotency-Key */
  readonly creates?: boolean;
  /** @default DEFAULT_MAX_BODY_BYTES */
  readonly maxBodyBytes?: number;
  /** answers 404 `feature_disabled` while the flag is off */
  readonly feature?: keyof FeatureFlags;
  /**
   * `json` (default): the body must be JSON when present. `raw`: the handler
   * reads `request.body` itself (NDJSON, forms, signed payloads). `stream`:
   * the handler runs once the headers are in and reads `request.bodyStream`
   * (uploads too large to hold in memory).
   */
  readonly bodyKind?: 'json' | 'raw' | 'stream';
  /**
   * A `raw` body that is NDJSON whatever its Content-Type says: its handler
   * bounds the nesting line by line (naming the line), so the edge does not
   * bound it as one JSON document.
   */
  readonly ndjson?: boolean;
  /**
   * The audit log entry of a successful mutating call (gateway/audit.ts derives
   * kind and action from the path): `false` for a POST that only reads
   * (recall, eval, validation); `{kind, action}` where the path does not say.
   */
  readonly audit?: false | { readonly kind?: string; readonly action?: string };
}

interface PublicRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> extends RouteBase<P, Q, B> {
  readonly auth: 'public';
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<HandlerResult>;
}

interface ProtectedRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> extends RouteBase<P, Q, B> {
  readonly auth: 'bearer';
  /** the permission the caller needs; omitted = any authenticated caller */
  readonly permission?: Permission;
  handler(ctx: AuthedContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<HandlerResult>;
}

/** A worker process's route: `Authorization: Bearer <WORKER_TOKEN>` only (no user credential). */
interface WorkerRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> extends RouteBase<P, Q, B> {
  readonly auth: 'worker';
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<HandlerResult>;
}

export type Route<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> =
  PublicRoute<P, Q, B> | ProtectedRoute<P, Q, B> | WorkerRoute<P, Q, B>;

/** Erased form kept in the route table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = Route<any, any, any>;

/** Identity helper that keeps the schema types flowing into the handler. */
export function route<P extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, B extends z.ZodType = z.ZodUndefined>(
  definition: Route<P, Q, B>,
): AnyRoute {
  return definition;
}
