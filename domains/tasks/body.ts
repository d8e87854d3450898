/**
 * Parses a verified webhook body by its content type: JSON,
 * `application/x-www-form-urlencoded` and `multipart/form-data` (fields as
 * strings; a file part becomes `{filename, content_type, size, base64}`).
 * No multipart library is installed, so a small RFC 7578 reader is here; it
 * works on the bytes already read (the transport enforced the size limit).
 */
import { DEFAULT_MAX_JSON_DEPTH, findTooDeep, stringTooDeep } from '../../runtime/json-depth.js';

export class BodyParseError extends Error {
  constructor(
    readonly kind: 'invalid_json' | 'unsupported_media_type' | 'validation_error' | 'payload_too_deep',
    message: string,
  ) {
    super(message);
    this.name = 'BodyParseError';
  }
}

interface MultipartFile {
  readonly filename: string;
  readonly content_type: string;
  readonly size: number;
  readonly base64: string;
}

/** Repeated names collect into an array, like most form readers. */
function addField(target: Record<string, unknown>, name: string, value: unknown): void {
  const existing = target[name];
  if (existing === undefined) target[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else target[name] = [existing, value];
}

function parseForm(raw: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) addField(out, name, value);
  return { ...out };
}

function headerParam(header: string, name: string): string | null {
  const match = new RegExp(`;\\s*${name}=(?:"([^"]*)"|([^;\\s]*))`, 'i').exec(header);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

function parseMultipart(raw: Buffer, contentType: string): Record<string, unknown> {
  const boundary = headerParam(contentType, 'boundary');
  if (!boundary) throw new BodyParseError('validation_error', 'multipart/form-data without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const out: Record<string, unknown> = {};
  let at = raw.indexOf(delimiter);
  if (at < 0) throw new BodyParseError('validation_error', 'multipart body does not contain its boundary');
  for (;;) {
    at += delimiter.length;
    // `--` after a delimiter closes the body
    if (raw[at] === 0x2d && raw[at + 1] === 0x2d) return out;
    if (raw[at] === 0x0d && raw[at + 1] === 0x0a) at += 2;
    const headerEnd = raw.indexOf('\r\n\r\n', at);
    if (headerEnd < 0) throw new BodyParseError('validation_error', 'multipart part without a header end');
    const headers: Record<string, string> = {};
    for (const line of raw.subarray(at, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) throw new BodyParseError('validation_error', 'multipart body is not closed by its boundary');
    const content = raw.subarray(headerEnd + 4, next);
    const disposition = headers['content-disposition'] ?? '';
    const name = headerParam(disposition, 'name');
    if (name === null) throw new BodyParseError('validation_error', 'multipart part without a name');
    const filename = headerParam(disposition, 'filename');
    if (filename === null) addField(out, name, content.toString('utf8'));
    else {
      const file: MultipartFile = {
        filename,
        content_type: headers['content-type'] ?? 'application/octet-stream',
        size: content.length,
        base64: content.toString('base64'),
      };
      addField(out, name, file);
    }
    at = next + 2;
  }
}

/** The parsed body (null for an empty one); throws BodyParseError. */
export function parseWebhookBody(raw: Buffer, contentType: string | undefined, maxDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  if (raw.length === 0) return null;
  const type = (contentType ?? 'application/json').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json')) {
    // also a body sent without a content type (read as JSON), and stored bodies replayed
    if (findTooDeep(raw, maxDepth) !== null) {
      throw new BodyParseError('payload_too_deep', `body nests arrays/objects deeper than ${maxDepth} levels`);
    }
    try {
      return JSON.parse(raw.toString('utf8')) as unknown;
    } catch (error) {
      throw new BodyParseError('invalid_json', `body is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    const form = parseForm(raw);
    // GitHub's form deliveries carry the JSON in `payload`
    const payload = form['payload'];
    // a payload nesting deeper than the edge allows a JSON body stays the form's text
    if (typeof payload === 'string' && Object.keys(form).length === 1 && !stringTooDeep(payload, maxDepth)) {
      try {
        return JSON.parse(payload) as unknown;
      } catch {
        return form;
      }
    }
    return form;
  }
  if (type === 'multipart/form-data') return parseMultipart(raw, contentType ?? '');
  if (type.startsWith('text/')) return raw.toString('utf8');
  throw new BodyParseError('unsupported_media_type', `content type ${type} is not read here (JSON, form or multipart)`);
}
