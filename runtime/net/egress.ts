/**
 * The egress guard: every outbound call made on a tenant's behalf (webhook
 * deliveries, connector sources, MCP servers, tenant LLM base URLs) goes
 * through it. A URL's host is parsed by WHATWG URL (so `2130706433`,
 * `0x7f000001`, `127.1` and `0177.0.0.1` all read as 127.0.0.1), names are
 * resolved when the socket connects and the address checked there is the one
 * connected to (pinned: a second DNS answer cannot slip in), and redirects are
 * followed only hop by hop through the same check (runtime/net/guarded-fetch.ts).
 *
 * Refused: loopback, private (incl. CGNAT and ULA), link-local, cloud metadata,
 * unspecified, multicast and reserved ranges. Operators open exceptions with
 * `EGRESS_ALLOW` (host names and CIDR ranges).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, Socket, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { ToolError, type NetPort } from '../../connectors/contract.js';
import { ServiceError } from '../errors.js';
import { canonicalAddress, classifyAddress, type AddressClass } from './address-class.js';
import { createGuardedFetch } from './guarded-fetch.js';

export { classifyAddress } from './address-class.js';

/** Why an address is refused; `address` is the IP judged, `host` the name asked for. */
export interface EgressRefusal {
  readonly address_class: Exclude<AddressClass, 'public'>;
  readonly address: string;
  readonly host: string;
}

/**
 * Thrown (or carried as `cause`) when the guard refuses a call. A ToolError,
 * so a connector tool that lets it through gives the model `egress_refused`.
 */
export class EgressRefusedError extends ToolError {
  constructor(readonly refusal: EgressRefusal) {
    const named = refusal.host === refusal.address ? refusal.address : `${refusal.host} (${refusal.address})`;
    super(
      'egress_refused',
      `outbound call to ${named} refused: ${refusal.address_class.replace('_', '-')} addresses are not reachable from here (an operator can open it with EGRESS_ALLOW)`,
      { ...refusal },
    );
    this.name = 'EgressRefusedError';
  }
}

/** The refusal anywhere in an error's `cause` chain (SDKs wrap what fetch threw), else null. */
export function egressRefusalOf(error: unknown): EgressRefusedError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof EgressRefusedError) return current;
    current = current.cause;
  }
  return null;
}

/** `EGRESS_ALLOW` entries, parsed: host names (exact, case-insensitive) and address ranges. */
export interface EgressAllowList {
  readonly entries: readonly string[];
  readonly hosts: ReadonlySet<string>;
  readonly ranges: BlockList;
}

/**
 * Parses `EGRESS_ALLOW` entries: `10.1.2.3`, `10.0.0.0/8`, `fd00::/8`, `::1`,
 * `git.internal`. Throws an Error naming the bad entry.
 */
export function parseEgressAllow(entries: readonly string[]): EgressAllowList {
  const hosts = new Set<string>();
  const ranges = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const ip = canonicalAddress(slash === -1 ? entry : entry.slice(0, slash));
    if (ip !== null) {
      const max = ip.family === 'ipv4' ? 32 : 128;
      const prefixText = slash === -1 ? String(max) : entry.slice(slash + 1);
      const prefix = Number(prefixText);
      if (!/^\d{1,3}$/.test(prefixText) || prefix > max) throw new Error(`"${entry}" has a bad prefix length (0-${max})`);
      ranges.addSubnet(ip.address, prefix, ip.family);
      continue;
    }
    if (slash !== -1) throw new Error(`"${entry}" is not a CIDR range (address/prefix)`);
    // a host name, as WHATWG URL would read it from a URL: lowercased, punycode, nothing else
    let hostname: string;
    try {
      hostname = new URL(`http://${entry}/`).hostname;
    } catch {
      throw new Error(`"${entry}" is neither a host name nor an IP address or CIDR range`);
    }
    if (canonicalAddress(hostname) !== null || hostname !== entry.toLowerCase()) {
      // e.g. `127.1` or `0x7f000001`: an address in a spelling we do not take in configuration
      throw new Error(`"${entry}" is neither a host name nor an IP address or CIDR range in standard notation`);
    }
    hosts.add(hostname);
  }
  return { entries, hosts, ranges };
}

export interface EgressGuard extends NetPort {
  /** the refusal for an address reached for `host`, or null when it may be reached */
  judge(host: string, address: string): EgressRefusal | null;
  /**
   * Checks a URL before anything is sent: when its host is a literal IP (in any
   * spelling WHATWG URL reads), its class. Names are judged when they resolve.
   * Null when nothing is wrong yet. @throws TypeError when `url` is not a URL
   */
  checkUrl(url: string | URL): EgressRefusal | null;
  /** the `lookup` the guard's sockets use: resolves, refuses, and pins what it checked */
  readonly lookup: LookupFunction;
}

/** `[::1]` -> `::1`: URL hostnames keep IPv6 brackets, sockets do not */
const bareHost = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();

/** Builds the guard once at start; every outbound client of tenant-chosen URLs gets it. */
export function createEgressGuard(options: { readonly allow: readonly string[] }): EgressGuard {
  const allow = parseEgressAllow(options.allow);

  const judge = (host: string, address: string): EgressRefusal | null => {
    const name = bareHost(host);
    if (allow.hosts.has(name)) return null;
    const canonical = canonicalAddress(address);
    const kind = classifyAddress(address);
    if (canonical === null || kind === null) return { address_class: 'reserved', address, host: name };
    if (allow.ranges.check(canonical.address, canonical.family)) return null;
    return kind === 'public' ? null : { address_class: kind, address: canonical.address, host: name };
  };

  const lookup = ((
    hostname: string,
    lookupOptions: LookupOptions,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      // every answer is judged: a name that resolves to a public and a private address is refused
      for (const { address } of addresses) {
        const refusal = judge(hostname, address);
        if (refusal !== null) {
          callback(new EgressRefusedError(refusal), []);
          return;
        }
      }
      const first = addresses[0];
      if (lookupOptions.all === true) callback(null, addresses);
      else if (first === undefined) callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      else callback(null, first.address, first.family);
    });
  }) as LookupFunction;

  const checkUrl = (url: string | URL): EgressRefusal | null => {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    const host = bareHost(parsed.hostname);
    return canonicalAddress(host) === null ? null : judge(host, host);
  };

  /** sockets skip `lookup` for literal IPs, so those are judged here, before connecting */
  const refusedSocket = (host: string | null | undefined): Duplex | null => {
    if (host === null || host === undefined) return null;
    const bare = bareHost(host);
    const refusal = canonicalAddress(bare) === null ? null : judge(bare, bare);
    if (refusal === null) return null;
    const socket = new Socket();
    process.nextTick(() => socket.destroy(new EgressRefusedError(refusal)));
    return socket;
  };

  class GuardedHttpAgent extends http.Agent {
    override createConnection(connectOptions: http.ClientRequestArgs, callback?: (error: Error | null, socket: Duplex) => void): Duplex | null | undefined {
      return refusedSocket(connectOptions.host) ?? super.createConnection({ ...connectOptions, lookup }, callback);
    }
  }
  class GuardedHttpsAgent extends https.Agent {
    override createConnection(connectOptions: http.ClientRequestArgs, callback?: (error: Error | null, socket: Duplex) => void): Duplex | null | undefined {
      return refusedSocket(connectOptions.host) ?? super.createConnection({ ...connectOptions, lookup }, callback);
    }
  }

  const httpAgent = new GuardedHttpAgent({ keepAlive: true, lookup });
  const httpsAgent = new GuardedHttpsAgent({ keepAlive: true, lookup });
  const agent = (protocol: 'http:' | 'https:', agentOptions?: https.AgentOptions): http.Agent => {
    if (agentOptions === undefined) return protocol === 'https:' ? httpsAgent : httpAgent;
    return protocol === 'https:' ? new GuardedHttpsAgent({ ...agentOptions, lookup }) : new GuardedHttpAgent({ ...agentOptions, lookup });
  };

  const resolve = (host: string): Promise<string> => {
    const bare = bareHost(host);
    if (canonicalAddress(bare) !== null) {
      const refusal = judge(bare, bare);
      return refusal === null ? Promise.resolve(bare) : Promise.reject(new EgressRefusedError(refusal));
    }
    return new Promise((done, fail) => {
      lookup(bare, {}, (error, address) =>
        error === null && typeof address === 'string' ? done(address) : fail(error ?? new Error(`${bare} has no address`)),
      );
    });
  };

  return {
    judge,
    checkUrl,
    lookup,
    agent,
    resolve,
    fetch: createGuardedFetch({
      agent,
      checkUrl,
      refused: (refusal) => new EgressRefusedError(refusal),
      isRefusal: (error) => error instanceof EgressRefusedError,
    }),
  };
}

/**
 * Save-time check of a URL a tenant gives (webhook, source, settings): a
 * literal IP the guard refuses answers 422 `egress_refused` naming `field`.
 * Names are judged when they resolve, at call time.
 */
export function assertEgressAllowed(guard: Pick<EgressGuard, 'checkUrl'>, url: string, field: string): void {
  let refusal: EgressRefusal | null;
  try {
    refusal = guard.checkUrl(url);
  } catch {
    return; // not a URL: the route's schema answers that
  }
  if (refusal !== null) throw new ServiceError('egress_refused', `${field}: ${new EgressRefusedError(refusal).message}`, { field, ...refusal });
}
