/**
 * Failed logins are throttled per account (5 per 15-minute window, lockouts
 * doubling) and per client address (20 per window), on the injected clock:
 * the test moves time instead of sleeping. A locked caller gets 429
 * `rate_limited` with Retry-After before any password is checked. Client
 * addresses are the socket's: the suite binds other loopback addresses
 * (127.0.0.2, ...) as the source of its connections.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import type { RuntimeClock } from '../../runtime/supervisor.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { simulatedClock } from '../helpers/clock.js';
import { expectError } from '../helpers/expect-status.js';

const WINDOW_MS = 900_000;

let server: TestServer;
let clock: SimulatedClock & RuntimeClock;
let sourceCounter = 10;

/** A fresh loopback source address, so address counts never leak between tests. */
const freshAddress = (): string => `127.0.0.${sourceCounter++}`;

/** POST /auth/login from `source` as the connection's local address. */
function loginFrom(
  source: string,
  email: string,
  password: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  const url = new URL(`${server.url}/auth/login`);
  const payload = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: source,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function failTimes(source: string, email: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const response = await loginFrom(source, email, 'wrong password');
    expect(response.status, `failure ${i + 1}`).toBe(401);
    expect(response.body.error.code).toBe('invalid_credentials');
  }
}

function expectThrottled(response: { status: number; headers: Record<string, string | string[] | undefined>; body: any }, seconds: number): void {
  expectError(response, 429, 'rate_limited');
  expect(response.headers['retry-after']).toBe(String(seconds));
  expect(response.body.error.details).toEqual({ retry_after_seconds: seconds });
}

let account: Session;

beforeAll(async () => {
  clock = simulatedClock('2026-03-01T09:00:00Z');
  server = await startTestServer({}, { clock });
});
afterAll(async () => server.stop());
beforeEach(async () => {
  account = await server.register();
});

describe('login throttling per account', () => {
  it('locks an account after 5 failures: 429 with Retry-After, even for the right password, and from any address', async () => {
    const source = freshAddress();
    await failTimes(source, account.email, 5);
    expectThrottled(await loginFrom(source, account.email, account.password), 900);
    expectThrottled(await loginFrom(freshAddress(), account.email, account.password), 900);
    // the email is matched as login normalizes it
    expectThrottled(await loginFrom(freshAddress(), `  ${account.email.toUpperCase()} `, account.password), 900);
    clock.increment(60_000);
    expectThrottled(await loginFrom(source, account.email, account.password), 840);
  });

  it('lets the account in again once the lockout has passed, and a second lockout lasts twice as long', async () => {
    const source = freshAddress();
    await failTimes(source, account.email, 5);
    clock.increment(WINDOW_MS - 1000);
    expectThrottled(await loginFrom(source, account.email, account.password), 1);
    clock.increment(1000);
    await failTimes(source, account.email, 5);
    expectThrottled(await loginFrom(source, account.email, account.password), 1800);
    clock.increment(1800_000);
    expect((await loginFrom(source, account.email, account.password)).status).toBe(200);
  });

  it('a success resets the count: 4 failures, a success, 4 failures stay below the limit', async () => {
    const source = freshAddress();
    await failTimes(source, account.email, 4);
    expect((await loginFrom(source, account.email, account.password)).status).toBe(200);
    await failTimes(source, account.email, 4);
    expect((await loginFrom(source, account.email, account.password)).status).toBe(200);
  });

  it('failures spread over more than a window never lock', async () => {
    const source = freshAddress();
    await failTimes(source, account.email, 4);
    clock.increment(WINDOW_MS);
    await failTimes(source, account.email, 4);
    expect((await loginFrom(source, account.email, account.password)).status).toBe(200);
  });

  it('another account, from another address, is unaffected by a locked one', async () => {
    const other = await server.register();
    await failTimes(freshAddress(), account.email, 5);
    expect((await loginFrom(freshAddress(), other.email, other.password)).status).toBe(200);
    expectThrottled(await loginFrom(freshAddress(), account.email, account.password), 900);
  });

  it('registering with a known email and a wrong password counts as a failure too', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await server.request('POST', '/auth/register', {
        body: { email: account.email, password: 'not the password', organization_name: 'Guess' },
      });
      expect(response.status).toBe(409);
    }
    const locked = await server.request('POST', '/auth/register', { body: { email: account.email, password: account.password, organization_name: 'Second' } });
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('900');
    expectThrottled(await loginFrom(freshAddress(), account.email, account.password), 900);
  });
});

describe('login throttling per client address', () => {
  it('locks an address after 20 failures across accounts; other addresses keep logging in', async () => {
    const source = freshAddress();
    for (let i = 0; i < 20; i++) {
      const response = await loginFrom(source, `nobody-${i}@example.test`, 'wrong password');
      expect(response.status, `failure ${i + 1}`).toBe(401);
    }
    expectThrottled(await loginFrom(source, account.email, account.password), 900);
    expect((await loginFrom(freshAddress(), account.email, account.password)).status).toBe(200);
    clock.increment(WINDOW_MS);
    expect((await loginFrom(source, account.email, account.password)).status).toBe(200);
  });
});
