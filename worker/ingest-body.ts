/**
 * Kind `ingest_body` (queue `ingest`): a large NDJSON body an ingest webhook
 * queued (feature `workers`). The worker reads the spooled bytes with its
 * fence (`GET /workers/jobs/:id/ingest-body`), parses and checks every line
 * here, off the gateway's event loop (one JSON object per line, valid UTF-8,
 * nesting within the gateway's `MAX_JSON_DEPTH`, no lone surrogate), and
 * normalizes the line ends (CRLF and trailing blanks dropped; empty lines
 * kept, so line numbers stay the sender's; values are sent as written, never
 * re-serialized: numbers are stored as written). Ingest pipelines have no
 * transforms to apply. The rows go back to the gateway
 * (`POST /workers/jobs/:id/ingest-rows`), which writes them into DuckDB behind
 * the fence, once; its answer (the run) is the job's result. A body that fails
 * the check completes the job with `{failure}`: the run ends `failed` with
 * `bad_ndjson` naming the line, and the job is not tried again.
 */
import { findBadLine, findDeepLine } from '../ingest/ndjson-lines.js';
import type { JobHandler } from './handlers.js';

const NEWLINE = 0x0a;

/** the body with each line's trailing CR, spaces and tabs dropped */
function normalizeLineEnds(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  while (start <= body.length) {
    let end = body.indexOf(NEWLINE, start);
    const last = end === -1;
    if (last) end = body.length;
    let trimmed = end;
    while (trimmed > start && (body[trimmed - 1] === 0x0d || body[trimmed - 1] === 0x20 || body[trimmed - 1] === 0x09)) trimmed -= 1;
    parts.push(body.subarray(start, trimmed));
    if (last) break;
    start = end + 1;
  }
  const separator = Buffer.from('\n');
  return Buffer.concat(parts.flatMap((part, index) => (index === 0 ? [part] : [separator, part])));
}

export const ingestBodyHandler: JobHandler = async (job, context) => {
  const path = `/workers/jobs/${encodeURIComponent(job.id)}`;
  const fence = `fence=${encodeURIComponent(job.fence)}`;
  const body = await context.client.getBytes(`${path}/ingest-body?${fence}`, context.signal);
  const maxDepth = typeof job.payload['max_depth'] === 'number' ? job.payload['max_depth'] : 64;
  const bad = findDeepLine(body, maxDepth) ?? findBadLine(body);
  if (bad) return { failure: { code: 'bad_ndjson', message: `line ${bad.line} ${bad.reason}; nothing was written`, line: bad.line } };
  const rows = normalizeLineEnds(body);
  return context.client.postBytes<Record<string, unknown>>(`${path}/ingest-rows?${fence}`, rows, 'application/x-ndjson', context.signal);
};
