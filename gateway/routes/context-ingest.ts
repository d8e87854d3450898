/**
 * POST /context/ingest/webhook/:token: NDJSON into the pipeline's table.
 * The token in the path is the credential; when the pipeline requires it, the
 * HMAC of the raw bytes is checked (constant time) before anything is parsed.
 * The body limit (CONTEXT_INGEST_MAX_BYTES) is enforced by the transport while
 * reading, so an oversized body is refused with 413 without being buffered.
 */
import { z } from 'zod';
import { verifyHmacSignature } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import { resolveToken, SigningSecrets } from '../../ingest/tokens.js';
import type { PlatformEvents } from '../../runtime/events.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

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

/** Lifecycle tasks hear how each ingest that reached its pipeline's writer ended: one event, completed or failed. */
async function reported<T>(events: PlatformEvents, orgId: string, pipelineId: string, work: Promise<T>): Promise<T> {
  const settled = await work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const failure = settled.ok
    ? null
    : settled.error instanceof ServiceError
      ? { code: settled.error.code, message: settled.error.message }
      : { code: 'internal_error', message: settled.error instanceof Error ? settled.error.message : 'ingest failed' };
  events.emit(failure ? 'ingest.failed' : 'ingest.completed', orgId, { pipeline_id: pipelineId, ...(failure ?? {}) });
  if (!settled.ok) throw settled.error instanceof Error ? settled.error : new Error('ingest failed');
  return settled.value;
}

export function contextIngestRoutes({ collections, config, contextTables, events, logger, clock }: Services): AnyRoute[] {
  const signingSecrets = new SigningSecrets(config.auth.jwtSecret);
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
      summary: 'Ingest NDJSON (one JSON object per line) into the pipeline table; answers after the rows are committed',
      // any string: a malformed token is just an unknown one (401), never a validation error
      params: z.object({ token: z.string() }),
      response: z.object({ rows_in: z.number().int(), rows_out: z.number().int(), run_id: z.number().int() }),
      handler: async ({ request, params }) => {
        const arrival = new Date(clock.now());
        const resolved = await resolveToken(collections, params.token);
        if (!resolved) throw new ServiceError('unknown_token', 'this ingest token was revoked or never existed');
        const { orgId, pipeline, token } = resolved;
        const target = {
          orgId,
          pipelineId: pipeline.id,
          tokenId: token.id,
          realm: pipeline.realm,
          table: pipeline.target_table,
          body: request.body,
          arrival,
        };
        const signingSecret = pipeline.require_signature ? signingSecrets.open({ ...token, org_id: orgId }) : null;
        // a secret that does not open verifies nothing (the operator hears of it: was JWT_SECRET changed?)
        if (pipeline.require_signature && signingSecret === null)
          logger.warn({ token_id: token.id, pipeline_id: pipeline.id }, 'an ingest signing secret does not decrypt');
        if (
          pipeline.require_signature &&
          (signingSecret === null || !verifyHmacSignature(signingSecret, request.body, request.headers['x-service-signature']))
        ) {
          throw await contextTables.writer.refuse(
            target,
            new ServiceError(
              'bad_signature',
              'X-Service-Signature is missing or is not sha256=<hex HMAC-SHA256 of the body keyed by the token signing secret>',
            ),
          );
        }
        const idempotencyKey = request.headers['idempotency-key'] ?? null;
        if (idempotencyKey !== null && !KEY_PATTERN.test(idempotencyKey)) {
          throw new ServiceError('validation_error', 'Idempotency-Key must be 1-255 printable ASCII characters');
        }
        const outcome = await reported(
          events,
          orgId,
          pipeline.id,
          contextTables.writer.ingest({
            ...target,
            autoCreate: booleanHeader(request.headers, 'x-auto-create'),
            schemaEvolve: booleanHeader(request.headers, 'x-schema-evolve'),
            idempotencyKey,
          }),
        );
        const headers: Record<string, string> = outcome.replayed ? { 'idempotent-replayed': 'true' } : {};
        return { status: 200, json: { rows_in: outcome.rows_in, rows_out: outcome.rows_out, run_id: outcome.run_id }, headers };
      },
    }),
  ];
}
