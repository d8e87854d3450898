/**
 * POST /context/ingest/webhook/:token: NDJSON into the pipeline's table.
 * The token in the path is the credential; when the pipeline requires it, the
 * HMAC of the raw bytes is checked (constant time) before anything is parsed
 * (domains/ingest-pipelines/intake.ts).
 * The body limit (CONTEXT_INGEST_MAX_BYTES) is enforced by the transport while
 * reading, so an oversized body is refused with 413 without being buffered.
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { streamOf } from '../http.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fenceQuery, workerJobParams } from './worker-jobs.js';

/** what the realm's graph took of a `context_nodes` batch (nodes and relationships written, rows refused: the first 20 with line and reason) */
export const graphOutcomeSchema = z.object({
  status: z.literal('done'),
  nodes: z.number().int(),
  relationships: z.number().int(),
  rejected: z.number().int(),
  rejections: z.array(z.object({ line: z.number().int(), reason: z.string() })),
});

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** `X-Auto-Create` / `X-Schema-Evolve`: absent = true; only `true` / `false` accepted. */
function booleanHeader(headers: Readonly<Record<string, string>>, name: string): boolean {
  const raw = headers[name];
  if (raw === undefined) return true;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ServiceError('validation_error', `header ${name} must be "true" or "false", got "${raw}"`, { header: name });
}

/** a body queued for a worker (feature `workers`, at least INGEST_WORKER_MIN_BYTES): its run, pending until a worker's rows are written */
const queuedSchema = z.object({ run_id: z.number().int(), status: z.literal('queued') });

/** a queued run as the worker that wrote its rows sees it */
const queuedRunSchema = z.object({
  run_id: z.number().int(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  rows_in: z.number().int(),
  rows_out: z.number().int(),
  error_code: z.string().nullable(),
  error: z.string().nullable(),
});

export function contextIngestRoutes({ ingestIntake: intake, queuedIngest, config, clock }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/context/ingest/webhook/:token',
      tag: 'context',
      auth: 'public',
      bodyKind: 'raw',
      ndjson: true,
      maxBodyBytes: config.contextIngestMaxBytes,
      secretParams: ['token'],
      summary:
        'Ingest NDJSON (one JSON object per line) into the pipeline table; answers after the rows are committed (a context_nodes pipeline: and upserted into the realm graph, `graph`)',
      // any string: a malformed token is just an unknown one (401), never a validation error
      params: z.object({ token: z.string() }),
      response: z.object({ rows_in: z.number().int(), rows_out: z.number().int(), run_id: z.number().int(), graph: graphOutcomeSchema.optional() }),
      responses: { 202: queuedSchema },
      errors: [409, 503],
      handler: async ({ request, params }) => {
        const arrival = new Date(clock.now());
        const target = await intake.admit(params.token, request.body, request.headers['x-service-signature'], arrival);
        const idempotencyKey = request.headers['idempotency-key'] ?? null;
        if (idempotencyKey !== null && !KEY_PATTERN.test(idempotencyKey)) {
          throw new ServiceError('validation_error', 'Idempotency-Key must be 1-255 printable ASCII characters');
        }
        const options = {
          autoCreate: booleanHeader(request.headers, 'x-auto-create'),
          schemaEvolve: booleanHeader(request.headers, 'x-schema-evolve'),
          idempotencyKey,
        };
        // feature workers: a large body is spooled and written once a worker normalized it (202; 503 with no worker)
        const queued = queuedIngest.applies(request.body.length) ? await queuedIngest.enqueue(target, options) : null;
        if (queued) {
          const replayed: Record<string, string> = queued.replayed ? { 'idempotent-replayed': 'true' } : {};
          return { status: 202, json: { run_id: queued.run_id, status: queued.status }, headers: replayed };
        }
        const outcome = await intake.ingest(target, options);
        const headers: Record<string, string> = outcome.replayed ? { 'idempotent-replayed': 'true' } : {};
        const graph = outcome.graph ? { graph: { status: 'done' as const, ...outcome.graph } } : {};
        return { status: 200, json: { rows_in: outcome.rows_in, rows_out: outcome.rows_out, run_id: outcome.run_id, ...graph }, headers };
      },
    }),
    route({
      method: 'GET',
      path: '/workers/jobs/:job_id/ingest-body',
      tag: 'workers',
      auth: 'worker',
      feature: 'workers',
      summary: "A queued ingest body, as received, for the worker holding the job's `fence` (WORKER_TOKEN; NDJSON, streamed); 409 lease_lost when stale",
      params: workerJobParams,
      query: fenceQuery,
      errors: [409],
      handler: async ({ params, query }) => {
        const { stream, size } = await queuedIngest.body(params.job_id, query.fence);
        return { status: 200, headers: { 'content-type': 'application/x-ndjson', 'x-file-size': String(size) }, body: streamOf(stream) };
      },
    }),
    route({
      method: 'POST',
      path: '/workers/jobs/:job_id/ingest-rows',
      tag: 'workers',
      auth: 'worker',
      feature: 'workers',
      audit: false,
      bodyKind: 'raw',
      ndjson: true,
      maxBodyBytes: config.contextIngestMaxBytes,
      summary:
        "A queued ingest's normalized rows (NDJSON), written by the gateway behind the job's `fence` with the end of its run, once (WORKER_TOKEN); 409 lease_lost when stale, before anything is written",
      params: workerJobParams,
      query: fenceQuery,
      response: queuedRunSchema,
      errors: [409],
      handler: async ({ request, params, query }) => {
        const run = await queuedIngest.write(params.job_id, query.fence, request.body);
        const { run_id, status, rows_in, rows_out, error_code, error } = run;
        return { status: 200, json: { run_id, status, rows_in, rows_out, error_code, error } };
      },
    }),
  ];
}
