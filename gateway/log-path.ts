/**
 * What the logs say about a request's path: the route's pattern, and the path
 * with the segments its route declares secret (`secretParams`: ingest tokens,
 * trigger ids) replaced by `[redacted]`. Decided from the route table, never
 * by guessing at the text. An unmatched path is not known to hold no secret:
 * only its first segment under the API prefix is kept.
 */
import type { Match } from './router.js';

const REDACTED = '[redacted]';

const segmentsOf = (path: string): string[] => path.split('/').filter((segment) => segment.length > 0);

export interface LoggedPath {
  /** the route's pattern (`/api/v1/hooks/:trigger_id`), or null when no route matched */
  readonly route: string | null;
  readonly path: string;
}

export function loggedPath(match: Match, prefix: string, path: string): LoggedPath {
  const actual = segmentsOf(path);
  if (match.kind !== 'found') {
    const kept = segmentsOf(prefix).length + 1;
    return { route: null, path: '/' + actual.map((segment, index) => (index < kept ? segment : REDACTED)).join('/') };
  }
  const route = prefix + match.route.path;
  const secret = match.route.secretParams;
  if (secret === undefined || secret.length === 0) return { route, path };
  const pattern = segmentsOf(route);
  const redacted = actual.map((segment, index) => {
    const part = pattern[index];
    return part !== undefined && part.startsWith(':') && secret.includes(part.slice(1)) ? REDACTED : segment;
  });
  return { route, path: '/' + redacted.join('/') };
}
