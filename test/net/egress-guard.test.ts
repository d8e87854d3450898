/**
 * The egress guard on its own: the address classes (pure), EGRESS_ALLOW
 * parsing, and the guard's fetch against local fakes (refusals happen before
 * any connection; redirects are judged hop by hop). Non-loopback addresses
 * are only ever refused, never contacted.
 */
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { classifyAddress, createEgressGuard, EgressRefusedError, parseEgressAllow } from '../../runtime/net/egress.js';

interface Fake {
  readonly server: Server;
  readonly port: number;
  readonly hits: string[];
}

/** a plain HTTP fake on `host`; `/hop` redirects to `redirectTo` when set */
async function startFake(host: string, redirectTo?: () => string): Promise<Fake> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} ${req.headers['authorization'] ?? ''}`);
    if (req.url === '/odd') {
      res.writeHead(999).end('odd');
      return;
    }
    if (req.url === '/hop' && redirectTo) {
      res.writeHead(302, { location: redirectTo() }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ host }));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('is null for what is not an address (names are judged once resolved)', () => {
    expect(classifyAddress('localhost')).toBe(null);
    expect(classifyAddress('127.1')).toBe(null);
    expect(classifyAddress('')).toBe(null);
  });
});

describe('EGRESS_ALLOW', () => {
  it('takes host names, addresses and CIDR ranges of both families', () => {
    const allow = parseEgressAllow(['git.internal', '10.20.0.0/16', '::1', 'fd00::/8']);
    expect([...allow.hosts]).toEqual(['git.internal']);
    expect(allow.ranges.check('10.20.3.4', 'ipv4')).toBe(true);
    expect(allow.ranges.check('10.21.0.1', 'ipv4')).toBe(false);
    expect(allow.ranges.check('fd12::1', 'ipv6')).toBe(true);
    expect(allow.ranges.check('::1', 'ipv6')).toBe(true);
  });

  it.each([['10.0.0.0/33'], ['10.0.0.0/x'], ['fd00::/129'], ['bad host'], ['127.1'], ['http://x/'], ['a/8']])(
    'refuses %s at start, naming the variable',
    (entry) => {
      expect(() => loadConfig({ EGRESS_ALLOW: entry, JWT_SECRET: 'x'.repeat(32) })).toThrow(ConfigError);
      expect(() => loadConfig({ EGRESS_ALLOW: entry, JWT_SECRET: 'x'.repeat(32) })).toThrow(/^EGRESS_ALLOW: /);
    },
  );

  it('defaults to nothing open', () => {
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).egressAllow).toEqual([]);
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), EGRESS_ALLOW: ' 127.0.0.1 , ::1 ' }).egressAllow).toEqual(['127.0.0.1', '::1']);
  });
});

describe('the guard', () => {
  let first: Fake;
  let second: Fake;

  beforeAll(async () => {
    second = await startFake('127.0.0.2');
    first = await startFake('127.0.0.1', () => `http://127.0.0.2:${second.port}/landed`);
  });
  afterAll(async () => {
    await new Promise((resolve) => first.server.close(resolve));
    await new Promise((resolve) => second.server.close(resolve));
  });

  const refusalOf = async (promise: Promise<unknown>): Promise<EgressRefusedError> => {
    const error = await promise.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(EgressRefusedError);
    return error as EgressRefusedError;
  };

  it('refuses loopback in every spelling, and names resolving there, before connecting', async () => {
    const guard = createEgressGuard({ allow: [] });
    const before = first.hits.length;
    for (const host of ['127.0.0.1', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::ffff:7f00:1]', '[::ffff:127.0.0.1]', 'localhost']) {
      const refusal = await refusalOf(guard.fetch(`http://${host}:${first.port}/`));
      expect(refusal.code).toBe('egress_refused');
      expect(refusal.refusal.address_class).toBe('loopback');
    }
    expect((await refusalOf(guard.fetch(`http://[::1]:${first.port}/`))).refusal).toMatchObject({ address_class: 'loopback', address: '::1' });
    expect(first.hits.length).toBe(before);
  });

  it('refuses private, link-local and metadata addresses (only refused, never contacted)', async () => {
    const guard = createEgressGuard({ allow: [] });
    expect((await refusalOf(guard.fetch('http://169.254.169.254/latest/meta-data/'))).refusal.address_class).toBe('metadata');
    expect((await refusalOf(guard.fetch('http://10.0.0.1/'))).refusal.address_class).toBe('private');
    expect((await refusalOf(guard.fetch('http://[fe80::1]/'))).refusal.address_class).toBe('link_local');
    expect((await refusalOf(guard.fetch('http://100.100.100.200/'))).refusal.address_class).toBe('metadata');
    expect(guard.checkUrl('http://0xa9fea9fe/')).toMatchObject({ address_class: 'metadata', address: '169.254.169.254' });
  });

  it('opens exactly what EGRESS_ALLOW lists: an address, a range, a host name', async () => {
    const byAddress = createEgressGuard({ allow: ['127.0.0.1'] });
    expect((await byAddress.fetch(`http://127.0.0.1:${first.port}/`)).status).toBe(200);
    expect((await refusalOf(byAddress.fetch(`http://127.0.0.2:${second.port}/`))).refusal.address_class).toBe('loopback');

    const byRange = createEgressGuard({ allow: ['127.0.0.0/30'] });
    expect(await (await byRange.fetch(`http://127.0.0.2:${second.port}/`)).json()).toEqual({ host: '127.0.0.2' });
    expect(byRange.checkUrl('http://127.0.0.5/')).toMatchObject({ address_class: 'loopback' });

    const byName = createEgressGuard({ allow: ['localhost'] });
    expect(byName.checkUrl('http://127.0.0.1/')).toMatchObject({ address_class: 'loopback' });
    expect(byName.judge('localhost', '127.0.0.1')).toBe(null);
    expect(byName.judge('other.test', '127.0.0.1')).toMatchObject({ address_class: 'loopback' });
  });

  it('judges every redirect hop: a redirect from an allowed host to a refused one is refused, unsent', async () => {
    const narrow = createEgressGuard({ allow: ['127.0.0.1'] });
    const before = second.hits.length;
    const refusal = await refusalOf(narrow.fetch(`http://127.0.0.1:${first.port}/hop`));
    expect(refusal.refusal).toMatchObject({ address_class: 'loopback', address: '127.0.0.2' });
    expect(second.hits.length).toBe(before);

    // the same redirect, both hops allowed: followed, and the token stays behind on the other origin
    const wide = createEgressGuard({ allow: ['127.0.0.1', '127.0.0.2'] });
    const followed = await wide.fetch(`http://127.0.0.1:${first.port}/hop`, { headers: { authorization: 'Bearer t0ken' } });
    expect(followed.redirected).toBe(true);
    expect(await followed.json()).toEqual({ host: '127.0.0.2' });
    expect(second.hits.slice(before)).toEqual(['GET /landed ']);

    // redirect: manual answers the 3xx itself
    const manual = await wide.fetch(`http://127.0.0.1:${first.port}/hop`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
  });

  it('its node:http agent refuses literal addresses and names before connecting (clients built on node:http)', async () => {
    const guard = createEgressGuard({ allow: [] });
    const before = first.hits.length;
    const viaAgent = (url: string): Promise<unknown> =>
      new Promise((resolve) => {
        get(url, { agent: guard.agent('http:') }, (res) => resolve(res.statusCode)).on('error', resolve);
      });
    for (const url of [`http://127.0.0.1:${first.port}/`, `http://localhost:${first.port}/`]) {
      const error = await viaAgent(url);
      expect(error, url).toBeInstanceOf(EgressRefusedError);
      expect((error as EgressRefusedError).refusal.address_class).toBe('loopback');
    }
    expect(first.hits.length).toBe(before);
    const open = createEgressGuard({ allow: ['127.0.0.1'] });
    expect(
      await new Promise((resolve) =>
        get(`http://127.0.0.1:${first.port}/`, { agent: open.agent('http:') }, (res) => {
          res.resume();
          resolve(res.statusCode);
        }),
      ),
    ).toBe(200);
  });

  it('sends bodies and answers like fetch (status, headers, JSON, abort)', async () => {
    const guard = createEgressGuard({ allow: ['127.0.0.1'] });
    const answer = await guard.fetch(`http://127.0.0.1:${first.port}/echo`, {
      method: 'POST',
      body: JSON.stringify({ a: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.ok).toBe(true);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.url).toBe(`http://127.0.0.1:${first.port}/echo`);
    expect(first.hits.at(-1)).toBe('POST /echo ');
    // a status fetch cannot represent fails the call instead of crashing the service
    await expect(guard.fetch(`http://127.0.0.1:${first.port}/odd`)).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    const aborted = new AbortController();
    aborted.abort();
    await expect(guard.fetch(`http://127.0.0.1:${first.port}/`, { signal: aborted.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
