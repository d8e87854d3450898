/** The answer formats of the protocols the fake speaks: query/XML (STS, Auto Scaling), EC2 query/XML, JSON 1.0/1.1, REST-JSON. */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export type Protocol = 'query' | 'ec2' | 'json1.0' | 'json1.1' | 'rest-json';

export const NAMESPACES: Record<string, string> = {
  sts: 'https://sts.amazonaws.com/doc/2011-06-15/',
  ec2: 'http://ec2.amazonaws.com/doc/2016-11-15/',
  autoscaling: 'http://autoscaling.amazonaws.com/doc/2011-01-01/',
};

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export type XmlValue = string | number | boolean | Date | null | undefined | XmlValue[] | { [tag: string]: XmlValue };

/**
 * `{ a: 1, b: { c: 'x' } }` -> `<a>1</a><b><c>x</c></b>`; an array under a key repeats
 * that key's wrapper members as `<item>` (EC2) or `<member>` (query), per `listTag`.
 */
export function xml(value: XmlValue, listTag: 'item' | 'member'): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => `<${listTag}>${xml(item, listTag)}</${listTag}>`).join('');
  if (typeof value === 'object')
    return Object.entries(value)
      .filter(([, inner]) => inner !== undefined && inner !== null)
      .map(([tag, inner]) => `<${tag}>${xml(inner, listTag)}</${tag}>`)
      .join('');
  return escapeXml(String(value));
}

export function sendXml(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
}

/** `<ActionResponse xmlns><ActionResult>...</ActionResult><ResponseMetadata/></ActionResponse>` (query protocol) */
export const queryAnswer = (res: ServerResponse, service: string, action: string, result: XmlValue): void =>
  sendXml(
    res,
    200,
    `<${action}Response xmlns="${NAMESPACES[service]}"><${action}Result>${xml(result, 'member')}</${action}Result><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`,
  );

/** `<ActionResponse xmlns><requestId/>...</ActionResponse>` (EC2 query protocol: no Result wrapper) */
export const ec2Answer = (res: ServerResponse, action: string, result: XmlValue): void =>
  sendXml(res, 200, `<${action}Response xmlns="${NAMESPACES['ec2']}"><requestId>${randomUUID()}</requestId>${xml(result, 'item')}</${action}Response>`);

export function sendJson(
  res: ServerResponse,
  protocol: 'json1.0' | 'json1.1' | 'rest-json',
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const type = protocol === 'rest-json' ? 'application/json' : `application/x-amz-json-${protocol.slice(4)}`;
  res.writeHead(status, { 'content-type': type, 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(JSON.stringify(body));
}

export interface AwsError {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** `Sender` (the caller's fault) or `Receiver` */
  readonly type?: 'Sender' | 'Receiver';
  /** the error shape's namespace for JSON `__type` (e.g. com.amazonaws.cloudwatch); query-compatible services send it */
  readonly namespace?: string;
  /** JSON 1.0 services that were query services before answer `x-amzn-query-error` too (CloudWatch) */
  readonly queryCompatible?: boolean;
}

/** An error in the protocol's own format. */
export function sendError(res: ServerResponse, protocol: Protocol, service: string, error: AwsError): void {
  const type = error.type ?? (error.status >= 500 ? 'Receiver' : 'Sender');
  const id = randomUUID();
  switch (protocol) {
    case 'query':
      return sendXml(
        res,
        error.status,
        `<ErrorResponse xmlns="${NAMESPACES[service] ?? ''}"><Error><Type>${type}</Type><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message></Error><RequestId>${id}</RequestId></ErrorResponse>`,
      );
    case 'ec2':
      return sendXml(
        res,
        error.status,
        `<Response><Errors><Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message></Error></Errors><RequestID>${id}</RequestID></Response>`,
      );
    case 'rest-json':
      return sendJson(
        res,
        protocol,
        error.status,
        { Type: type === 'Sender' ? 'User' : 'Service', message: error.message },
        { 'x-amzn-errortype': error.code },
      );
    default:
      return sendJson(
        res,
        protocol,
        error.status,
        { __type: error.namespace === undefined ? error.code : `${error.namespace}#${error.code}`, message: error.message },
        error.queryCompatible ? { 'x-amzn-query-error': `${error.code};${type}` } : {},
      );
  }
}

/** `Filter.1.Name=a&Filter.1.Value.1=b` -> the values of every indexed member under a prefix, in order */
export function members(form: URLSearchParams, prefix: string): string[] {
  const found: [number, string][] = [];
  for (const [key, value] of form) {
    const match = new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.(\\d+)$`).exec(key);
    if (match) found.push([Number(match[1]), value]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
}

/** epoch seconds, how JSON protocols carry timestamps */
export const epoch = (date: Date): number => date.getTime() / 1000;
