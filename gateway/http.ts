/** Transport-neutral request and response: the routing core never sees uWebSockets.js. */

export interface HttpRequest {
  readonly method: string;
  /** path without the query string, e.g. `/api/v1/realms` */
  readonly path: string;
  readonly query: URLSearchParams;
  /** lowercase header names */
  readonly headers: Readonly<Record<string, string>>;
  /** the exact bytes received (signatures are checked on these); empty for a `stream` route */
  readonly body: Buffer;
  /**
   * A `stream` route's body as it arrives (its handler runs from the first
   * byte on): the transport reads on as the handler consumes, and ends the
   * stream with a ServiceError when the body passes the route's limit.
   */
  readonly bodyStream?: AsyncIterable<Buffer>;
  readonly requestId: string;
  /** the peer address of the connection (never a forwarded header); absent when the transport has none */
  readonly remoteAddress?: string;
  /** called once if the client goes before the response is sent (a long poll stops waiting); absent when the transport cannot tell */
  readonly onAborted?: (listener: () => void) => void;
}

/** The writable side of a streamed response (Server-Sent Events, long downloads). */
export interface ResponseStream {
  /** sends a chunk now; false once the client has gone (the chunk is dropped) */
  write(chunk: string | Buffer): boolean;
  /** ends the response; later writes are dropped */
  end(): void;
  readonly closed: boolean;
  /** called once, when the client disconnects or the response ends */
  onClose(listener: () => void): void;
}

/** A body produced over time: the transport sends status and headers, then hands over the stream. */
export interface StreamBody {
  readonly stream: (sink: ResponseStream) => void;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** already serialized, or streamed */
  readonly body: string | Buffer | StreamBody;
}

/**
 * A readable (a file) sent as a streamed body: stopped when the client goes
 * or falls behind; a read error ends the response early (the headers are out
 * already, so a size header is how the client tells).
 */
export function streamOf(readable: NodeJS.ReadableStream & { destroy(): void }): StreamBody {
  return {
    stream: (sink) => {
      sink.onClose(() => readable.destroy());
      readable.on('data', (chunk: Buffer) => {
        if (!sink.write(chunk)) readable.destroy();
      });
      readable.on('end', () => sink.end());
      readable.on('error', () => sink.end());
    },
  };
}

export const isStreamBody = (body: HttpResponse['body']): body is StreamBody => typeof body === 'object' && !Buffer.isBuffer(body) && 'stream' in body;

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON response; `serialized` skips serializing `value` when the caller already holds the text. */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}, serialized?: string): HttpResponse {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
    body: status === 204 ? '' : (serialized ?? JSON.stringify(value)),
  };
}
