/**
 * Server-Sent Events of agent runs, shared by chat replies and task runs: a
 * live run streams from its feed, a finished one replays its stored
 * transcript and closes. Every event's `id:` is its transcript `seq`.
 */
import type { AgentRunEventDoc } from '../runtime/collections.js';
import type { RunFeed, TranscriptEvent } from '../runtime/agent/run-feed.js';
import type { HttpResponse, ResponseStream } from './http.js';

/** Exactly the fields the spec gives each stream event; transcript entries of other types are not streamed. */
const STREAM_FIELDS: Readonly<Record<string, readonly string[]>> = {
  message_start: ['message_id'],
  content_delta: ['delta'],
  tool_call_start: ['tool_call_id', 'name', 'connector'],
  approval_required: ['approval_id', 'tool', 'args'],
  tool_result: ['tool_call_id', 'result'],
  error: ['code', 'message'],
  message_end: ['finish_reason', 'usage'],
  media_progress: ['job_id', 'status', 'progress', 'outputs'],
  tool_deferred: ['tool_call_id', 'kind', 'keys'],
};

function sseFrame(event: Pick<TranscriptEvent, 'seq' | 'type' | 'data'>): string | null {
  const fields = STREAM_FIELDS[event.type];
  if (!fields) return null;
  const data: Record<string, unknown> = {};
  for (const field of fields) data[field] = event.data[field] ?? null;
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** what EventSource clients wait before reconnecting */
export const RECONNECT_MS = 2000;
export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** Streams a live run from after `afterSeq`; the client leaving only unsubscribes. */
export function liveStream(feed: RunFeed, afterSeq: number, headers: Record<string, string> = {}): HttpResponse {
  return {
    status: 200,
    headers: { ...SSE_HEADERS, ...headers },
    body: {
      stream: (sink) => {
        // uWS sends the status line and headers with the first write: send one now, even when no event is due yet
        sink.write(`retry: ${RECONNECT_MS}\n\n`);
        pipeFeed(feed, afterSeq, sink);
      },
    },
  };
}

/** Writes a run's events after `afterSeq` to an open stream until the run ends; the client leaving only unsubscribes. */
export function pipeFeed(feed: RunFeed, afterSeq: number, sink: ResponseStream): void {
  const unsubscribe = feed.subscribe(afterSeq, {
    event: (entry) => {
      const frame = sseFrame(entry);
      if (frame !== null) sink.write(frame);
    },
    end: () => sink.end(),
  });
  sink.onClose(unsubscribe);
}

/** Replays a finished run's stored transcript. */
export function storedStream(events: readonly AgentRunEventDoc[], afterSeq: number): HttpResponse {
  const frames = [...events]
    .sort((a, b) => a.seq - b.seq)
    .filter((event) => event.seq > afterSeq)
    .map(sseFrame)
    .filter((frame): frame is string => frame !== null);
  return {
    status: 200,
    headers: SSE_HEADERS,
    body: {
      stream: (sink) => {
        if (frames.length > 0) sink.write(frames.join(''));
        sink.end();
      },
    },
  };
}
