/**
 * SigV4 as AWS checks it, written from the specification (not the SDK's
 * signer): the `authorization` header's shape, then the signature recomputed
 * from the canonical request with the secret of the named key.
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface Authorization {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

const SHAPE =
  /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]{16,128})\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** the parsed header, or null when it is missing or not of the SigV4 shape */
export function parseAuthorization(header: string | undefined): Authorization | null {
  const match = header === undefined ? null : SHAPE.exec(header);
  if (match === null) return null;
  const [, accessKeyId, date, region, service, signed, signature] = match as unknown as [string, string, string, string, string, string, string];
  return { accessKeyId, date, region, service, signedHeaders: signed.split(';'), signature };
}

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone) */
const escape = (value: string): string => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** every segment of the path as sent, encoded once more (non-S3 services double-encode), dot segments removed */
function canonicalPath(rawPath: string): string {
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(escape(segment));
  }
  const trailing = segments.length > 0 && rawPath.endsWith('/') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

function canonicalQuery(rawQuery: string): string {
  const pairs = [...new URLSearchParams(rawQuery)].filter(([key]) => key !== 'X-Amz-Signature').map(([key, value]) => `${escape(key)}=${escape(value)}`);
  return pairs.sort().join('&');
}

export interface SignedMessage {
  readonly method: string;
  /** path and query exactly as received */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** The signature the request should carry when signed with `secret`; null when a signed header is absent. */
export function expectedSignature(message: SignedMessage, auth: Authorization, secret: string): string | null {
  const at = message.url.indexOf('?');
  const path = at === -1 ? message.url : message.url.slice(0, at);
  const query = at === -1 ? '' : message.url.slice(at + 1);
  const headerLines: string[] = [];
  for (const name of auth.signedHeaders) {
    const value = message.headers[name];
    if (value === undefined) return null;
    headerLines.push(`${name}:${String(value).trim().replace(/\s+/g, ' ')}`);
  }
  const declared = message.headers['x-amz-content-sha256'];
  const payloadHash = typeof declared === 'string' ? declared : sha256(message.body);
  const canonical = [message.method, canonicalPath(path), canonicalQuery(query), `${headerLines.join('\n')}\n`, auth.signedHeaders.join(';'), payloadHash].join(
    '\n',
  );
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', String(message.headers['x-amz-date']), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, auth.date), auth.region), auth.service), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}
