/**
 * Remote file paths as clients name them (`reports/2026/q1.csv`): normalized
 * to forward-slash segments, never absolute, never climbing out with `..`.
 * The check is lexical; the store adds the symlink check on the real paths.
 */
import { ServiceError } from '../errors.js';

/** 1,024 characters, 255 per segment: what common file systems accept. */
const MAX_PATH_LENGTH = 1024;
const MAX_SEGMENT_LENGTH = 255;
/** our own temporary files while an upload is written; never listed, never addressable */
export const PARTIAL_SUFFIX = '.partial-upload';

/** a UTF-16 surrogate without its partner: no file system name can hold it */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * `a//b/./c` -> `a/b/c`, in Unicode NFC (one spelling per name: a composed
 * and a decomposed `é` are the same file); thrown when the path is empty,
 * climbs out, or holds NUL, a backslash or a lone surrogate.
 */
export function normalizeRemotePath(raw: string): string {
  const invalid = (reason: string): ServiceError => new ServiceError('validation_error', `invalid file path "${raw}": ${reason}`, { field: 'path' });
  if (raw.includes('\0')) throw invalid('contains a NUL character');
  if (LONE_SURROGATE.test(raw)) throw invalid('contains a lone UTF-16 surrogate');
  // a backslash is a separator on some clients: refusing it keeps one meaning per path
  if (raw.includes('\\')) throw invalid('use "/" as the separator');
  const segments = raw
    .normalize('NFC')
    .split('/')
    .filter((segment) => segment.length > 0 && segment !== '.');
  if (segments.length === 0) throw invalid('it names no file');
  for (const segment of segments) {
    if (segment === '..') throw invalid('".." is not allowed');
    if (segment.length > MAX_SEGMENT_LENGTH) throw invalid(`a segment is longer than ${MAX_SEGMENT_LENGTH} characters`);
    if (segment.endsWith(PARTIAL_SUFFIX)) throw invalid(`names ending in ${PARTIAL_SUFFIX} are reserved`);
  }
  const normalized = segments.join('/');
  if (normalized.length > MAX_PATH_LENGTH) throw invalid(`longer than ${MAX_PATH_LENGTH} characters`);
  return normalized;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ts: 'text/plain',
  py: 'text/x-python',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  parquet: 'application/vnd.apache.parquet',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};

/** By extension: what a browser or client needs to open the download; unknown = octet-stream. */
export function contentTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  const extension = dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
  return CONTENT_TYPES[extension] ?? 'application/octet-stream';
}
