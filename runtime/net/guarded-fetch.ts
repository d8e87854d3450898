/**
 * A WHATWG `fetch` on top of `node:http(s)` with the egress guard's agents.
 * Node's global fetch (undici) cannot take a connect-time `lookup` without
 * the `undici` package, so this carries the request itself: every socket is
 * opened by a guarded agent (the resolved address is judged and pinned), and
 * redirects are followed here, hop by hop, each one judged again (at most
 * MAX_REDIRECTS). Bodies are buffered (outbound calls send small JSON);
 * answers stream.
 */
import type http from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline, Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { EgressRefusal } from './egress.js';

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** dropped when a redirect leaves the origin, as the Fetch standard does */
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export interface GuardedFetchPorts {
  agent(protocol: 'http:' | 'https:'): http.Agent;
  checkUrl(url: URL): EgressRefusal | null;
  refused(refusal: EgressRefusal): Error;
  /** true for the guard's own refusals, which surface as they are (not as `fetch failed`) */
  isRefusal(error: unknown): boolean;
}

/** fetch's own failure shape, so SDKs that read `cause` keep working */
const fetchFailed = (cause: unknown): TypeError => new TypeError('fetch failed', { cause });

/** what an aborted fetch rejects with: the signal's reason (an AbortError or TimeoutError DOMException) */
const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');

function decoded(response: http.IncomingMessage): Readable {
  let decoder: Transform;
  switch ((response.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      decoder = createGunzip();
      break;
    case 'deflate':
      decoder = createInflate();
      break;
    case 'br':
      decoder = createBrotliDecompress();
      break;
    default:
      return response;
  }
  // pipeline, not pipe: a connection reset mid-body errors the decoder (read by the caller), never an unheard stream
  return pipeline(response, decoder, () => undefined);
}

interface Hop {
  readonly url: URL;
  readonly method: string;
  readonly headers: Headers;
  readonly body: Buffer | null;
}

function send(hop: Hop, signal: AbortSignal, ports: GuardedFetchPorts): Promise<Response> {
  return new Promise((resolve, reject) => {
    const protocol = hop.url.protocol === 'https:' ? 'https:' : 'http:';
    const headers: Record<string, string> = {};
    hop.headers.forEach((value, name) => (headers[name] = value));
    if (hop.body !== null) headers['content-length'] = String(hop.body.length);
    const onAbort = (): void => {
      outgoing.destroy();
      reject(abortReason(signal));
    };
    const outgoing = (protocol === 'https:' ? httpsRequest : httpRequest)(
      hop.url,
      { method: hop.method, headers, agent: ports.agent(protocol) },
      (incoming) => {
        signal.removeEventListener('abort', onAbort);
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
        const status = incoming.statusCode ?? 502;
        let body: ReadableStream<Uint8Array> | null = null;
        if (NULL_BODY.has(status) || hop.method === 'HEAD') incoming.resume();
        else {
          const stream = decoded(incoming);
          // an abort after the headers ends the body stream with the abort's reason
          const stop = (): void => void stream.destroy(abortReason(signal));
          signal.addEventListener('abort', stop, { once: true });
          stream.once('close', () => signal.removeEventListener('abort', stop));
          body = Readable.toWeb(stream) as ReadableStream<Uint8Array>;
        }
        try {
          const response = new Response(body, { status, statusText: incoming.statusMessage ?? '', headers: responseHeaders });
          Object.defineProperty(response, 'url', { value: hop.url.href });
          resolve(response);
        } catch (error) {
          // a status fetch cannot represent (e.g. 999 from a hostile endpoint) is a failed fetch, not a crash
          incoming.destroy();
          reject(fetchFailed(error));
        }
      },
    );
    outgoing.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(abortReason(signal));
      else reject(ports.isRefusal(error) ? error : fetchFailed(error));
    });
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.end(hop.body ?? undefined);
  });
}

/** The guard's fetch; `redirect: 'manual'` answers the 3xx itself, `'error'` fails on it. */
export function createGuardedFetch(ports: GuardedFetchPorts): typeof fetch {
  const guardedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const body = request.body === null ? null : Buffer.from(await request.arrayBuffer());
    const headers = new Headers(request.headers);
    if (!headers.has('accept')) headers.set('accept', '*/*');
    let hop: Hop = { url: new URL(request.url), method: request.method, headers, body };
    for (let redirects = 0; ; redirects++) {
      if (hop.url.protocol !== 'http:' && hop.url.protocol !== 'https:') throw fetchFailed(new Error(`scheme ${hop.url.protocol} is not fetched`));
      const refusal = ports.checkUrl(hop.url);
      if (refusal !== null) throw ports.refused(refusal);
      const response = await send(hop, request.signal, ports);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null || request.redirect === 'manual') {
        if (redirects > 0) Object.defineProperty(response, 'redirected', { value: true });
        return response;
      }
      await response.body?.cancel();
      if (request.redirect === 'error') throw fetchFailed(new Error(`redirected (${response.status}) with redirect: "error"`));
      if (redirects >= MAX_REDIRECTS) throw fetchFailed(new Error(`more than ${MAX_REDIRECTS} redirects`));
      const next = new URL(location, hop.url);
      const nextHeaders = new Headers(hop.headers);
      if (next.origin !== hop.url.origin) for (const name of ORIGIN_BOUND_HEADERS) nextHeaders.delete(name);
      // 303 (and 301/302 after a POST) turn into a GET without a body, as browsers and undici do
      const toGet = response.status === 303 ? hop.method !== 'HEAD' : (response.status === 301 || response.status === 302) && hop.method === 'POST';
      if (toGet) for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) nextHeaders.delete(name);
      hop = { url: next, method: toGet ? 'GET' : hop.method, headers: nextHeaders, body: toGet ? null : hop.body };
    }
  };
  return guardedFetch;
}
