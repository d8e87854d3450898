/**
 * A webhook receiver on 127.0.0.1 that checks what a real receiver would:
 * `X-Service-Signature` (hex HMAC-SHA256 of the raw body) and the Standard
 * Webhooks headers (`webhook-id`, `webhook-timestamp` within 5 minutes,
 * `webhook-signature` entries `v1,<base64 HMAC of "id.timestamp.body">`
 * keyed by the `whsec_` secret's decoded bytes). Verification is written
 * here from the specs, independently of the service's signing code.
 *
 * It can be told to fail: `failNext(2)` answers 500 to the next two requests
 * (optionally with `Retry-After`), then 200 again; `holdNext()` leaves the
 * next request unanswered (a delivery cut mid-flight). A request whose
 * signatures do not verify answers 401 and is recorded with `verified: false`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOLERANCE_SECONDS = 300;

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** parsed JSON body */
  readonly json: unknown;
  /** which accepted secrets produced a matching X-Service-Signature or X-Service-Signature-Previous */
  readonly serviceSignatureMatches: string[];
  /** which accepted secrets matched a webhook-signature entry */
  readonly standardSignatureMatches: string[];
  readonly timestampFresh: boolean;
  /** both schemes verified with at least one accepted secret */
  readonly verified: boolean;
  /** what the receiver answered */
  readonly answered: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** the secrets a delivery may be signed with (plain, or whsec_ form for the Standard Webhooks check) */
  acceptSecrets(secrets: readonly string[]): void;
  /** the next `count` requests answer `status` (default 500) */
  failNext(count: number, status?: number, retryAfterSeconds?: number): void;
  /** the next request gets no answer until `release()` (a receiver stuck mid-delivery); resolves when it arrives */
  holdNext(): Promise<void>;
  release(): void;
  /** resolves once `count` requests were answered 2xx */
  waitForSuccesses(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const equal = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

function hexHmacMatches(secret: string, body: Buffer, header: string | undefined): boolean {
  const match = /^sha256=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match?.[1]) return false;
  return equal(createHmac('sha256', secret).update(body).digest(), Buffer.from(match[1], 'hex'));
}

/** The Standard Webhooks key: `whsec_` + base64, or the plain secret's bytes (our documented mapping). */
const standardKey = (secret: string): Buffer => (secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8'));

function standardMatches(secret: string, headers: IncomingHttpHeaders, body: Buffer): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  const expected = createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    return version === 'v1' && signature !== undefined && equal(expected, Buffer.from(signature, 'base64'));
  });
}

export async function startWebhookReceiver(secrets: readonly string[] = []): Promise<WebhookReceiver> {
  let accepted = [...secrets];
  let failures: { count: number; status: number; retryAfter?: number } = { count: 0, status: 500 };
  const requests: ReceivedRequest[] = [];
  let waiters: { count: number; resolve: (requests: ReceivedRequest[]) => void }[] = [];
  let hold: { arrived: () => void } | null = null;
  let held: (() => void)[] = [];
  const successes = (): ReceivedRequest[] => requests.filter((request) => request.answered < 300);

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (hold !== null) {
        const { arrived } = hold;
        hold = null;
        // the socket stays open and unanswered until release(); the request is not recorded
        held.push(() => res.destroy());
        arrived();
        return;
      }
      const body = Buffer.concat(chunks);
      const serviceSignatureMatches = accepted.filter(
        (secret) =>
          hexHmacMatches(secret, body, req.headers['x-service-signature'] as string | undefined) ||
          hexHmacMatches(secret, body, req.headers['x-service-signature-previous'] as string | undefined),
      );
      const standardSignatureMatches = accepted.filter((secret) => standardMatches(secret, req.headers, body));
      const timestampFresh = Math.abs(Date.now() / 1000 - Number(req.headers['webhook-timestamp'])) <= TOLERANCE_SECONDS;
      const verified = serviceSignatureMatches.length > 0 && standardSignatureMatches.length > 0 && timestampFresh;
      let answered = verified ? 200 : 401;
      const headers: Record<string, string> = {};
      if (verified && failures.count > 0) {
        failures.count -= 1;
        answered = failures.status;
        if (failures.retryAfter !== undefined) headers['retry-after'] = String(failures.retryAfter);
      }
      let json: unknown = null;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = null;
      }
      requests.push({
        path: req.url ?? '/',
        headers: req.headers,
        body,
        json,
        serviceSignatureMatches,
        standardSignatureMatches,
        timestampFresh,
        verified,
        answered,
      });
      res.writeHead(answered, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ ok: answered < 300 }));
      const done = successes();
      waiters = waiters.filter((waiter) => {
        if (done.length < waiter.count) return true;
        waiter.resolve(done);
        return false;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    acceptSecrets: (next) => {
      accepted = [...next];
    },
    failNext: (count, status = 500, retryAfterSeconds) => {
      failures = { count, status, ...(retryAfterSeconds === undefined ? {} : { retryAfter: retryAfterSeconds }) };
    },
    holdNext: () =>
      new Promise<void>((arrived) => {
        hold = { arrived };
      }),
    release: () => {
      for (const drop of held) drop();
      held = [];
    },
    waitForSuccesses: (count) => {
      const done = successes();
      if (done.length >= count) return Promise.resolve(done);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
