/**
 * `Idempotency-Key` on creates: the first request with a key reserves it; a
 * retry with the same key, organization, principal (user, API key or pipeline
 * run), route and body answers the stored
 * status and body and creates nothing. Failed requests release the key so the
 * client can retry. Keys expire after 24 hours.
 *
 * Stored responses are sealed (AES-256-GCM): creates such as API keys and
 * invites answer a plaintext secret exactly once, and that secret must not sit
 * readable in the database while the key lives.
 */
import { ServiceError } from '../runtime/errors.js';
import { seal, sha256Hex, unseal } from '../runtime/crypto.js';
import { UniqueViolation, type OrgCollection, type OrgId } from '../runtime/store/types.js';
import { isStreamBody, type HttpRequest, type HttpResponse } from './http.js';
import type { IdempotencyRecord } from '../runtime/collections.js';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export class IdempotencyGuard {
  /** @param sealingKey 32 bytes; responses stored under a key are encrypted with it */
  constructor(
    private readonly records: OrgCollection<IdempotencyRecord>,
    private readonly sealingKey: Uint8Array,
  ) {}

  /**
   * Runs `create` at most once per key; returns the original response on a retry.
   * `principal` names the caller: records are theirs alone, so another member
   * sending the same key and body creates their own resource and never sees
   * the first caller's response (which may hold a plaintext secret).
   */
  async run(org: OrgId, principal: string, request: HttpRequest, create: () => Promise<HttpResponse>): Promise<HttpResponse> {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return create();
    if (!KEY_PATTERN.test(key)) {
      throw new ServiceError('validation_error', 'Idempotency-Key must be 1-255 printable ASCII characters');
    }
    const scope = `${principal} ${request.method} ${request.path}`;
    const requestHash = sha256Hex(request.body);
    const reservation = await this.reserve(org, scope, key, requestHash);
    if (reservation.kind === 'replay') return reservation.response;

    let response: HttpResponse;
    try {
      response = await create();
    } catch (error) {
      await this.records.delete(org, reservation.id);
      throw error;
    }
    if (isStreamBody(response.body)) {
      // a stream cannot be replayed: the key is released and the create is answered as is
      await this.records.delete(org, reservation.id);
      return response;
    }
    if (response.status >= 200 && response.status < 300) {
      await this.records.update(org, reservation.id, {
        state: 'done',
        status: response.status,
        response_body: seal(this.sealingKey, response.body.toString(), reservation.id),
        response_headers: { ...response.headers },
      });
    } else {
      await this.records.delete(org, reservation.id);
    }
    return response;
  }

  private open(record: IdempotencyRecord): string {
    if (record.response_body === undefined) return '';
    try {
      return unseal(this.sealingKey, record.response_body, record.id);
    } catch {
      // sealed under another server secret (JWT_SECRET changed): never re-run the create silently
      throw new ServiceError('conflict', 'the stored response of this Idempotency-Key can no longer be read; retry with a new key');
    }
  }

  private async reserve(
    org: OrgId,
    scope: string,
    key: string,
    requestHash: string,
  ): Promise<{ kind: 'reserved'; id: string } | { kind: 'replay'; response: HttpResponse }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const record = await this.records.insert(org, { scope, key, request_hash: requestHash, state: 'pending' });
        return { kind: 'reserved', id: record.id };
      } catch (error) {
        if (!(error instanceof UniqueViolation)) throw error;
      }
      const existing = await this.records.findOne(org, { scope, key });
      if (!existing) continue; // released between our insert and read: try again
      // wall clock: created_at is the store's own stamp
      if (Date.parse(existing.created_at) + IDEMPOTENCY_TTL_MS < Date.now()) {
        await this.records.delete(org, existing.id);
        continue;
      }
      if (existing.request_hash !== requestHash) {
        throw new ServiceError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
      }
      if (existing.state === 'pending' || existing.status === undefined) {
        throw new ServiceError('idempotency_in_progress', 'a request with this Idempotency-Key is still in progress');
      }
      return {
        kind: 'replay',
        response: {
          status: existing.status,
          headers: { ...existing.response_headers, 'idempotent-replayed': 'true' },
          body: this.open(existing),
        },
      };
    }
    throw new ServiceError('idempotency_in_progress', 'a request with this Idempotency-Key is still in progress');
  }
}
