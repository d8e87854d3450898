/** Transport-neutral request and response: the routing core never sees uWebSockets.js. */

export interface HttpRequest {
  readonly method: string;
  /** path without the query string, e.g. `/api/v1/realms` */
  readonly path: string;
  readonly query: URLSearchParams;
  /** lowercase header names */
  readonly headers: Readonly<Record<string, string>>;
  /** the exact bytes received (signatures are checked on these) */
  readonly body: Buffer;
  readonly requestId: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** already serialized */
  readonly body: string | Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON response; `serialized` skips serializing `value` when the caller already holds the text. */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}, serialized?: string): HttpResponse {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
    body: status === 204 ? '' : (serialized ?? JSON.stringify(value)),
  };
}
