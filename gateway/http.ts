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

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: status === 204 ? '' : JSON.stringify(value),
  };
}
