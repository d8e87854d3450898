/**
 * The frames of the WebSocket feed (`/ws`, README "Live feeds"): what a
 * client may send (validated by zod, after a size and nesting bound), what
 * the server answers, and which events a subscription receives.
 */
import { z } from 'zod';
import type { FeedEvent } from '../runtime/feed/change-feed.js';
import { findTooDeep } from '../runtime/json-depth.js';
import { ServiceError } from '../runtime/errors.js';

/**
 * A token offered as `Sec-WebSocket-Protocol: bearer, <token>` (browsers can set no other header on
 * a WebSocket); `protocol` is what the upgrade answers, `bearer` when it was offered.
 */
export function bearerProtocol(header: string): { readonly token: string | undefined; readonly protocol: string } {
  const offered = header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const at = offered.indexOf('bearer');
  return at >= 0 ? { token: offered[at + 1], protocol: 'bearer' } : { token: undefined, protocol: '' };
}

/** the largest client frame; a larger one closes the connection (uWS) */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;
const MAX_FRAME_DEPTH = 8;
const MAX_TOPICS = 20;
const MAX_LABELS = 50;

const NAME = z.string().min(1).max(200);

const graphTopic = z.strictObject({
  kind: z.literal('graph'),
  realm: NAME.default('default'),
  /** only changes touching one of these labels (a Cypher write, whose labels are unknown, always matches) */
  labels: z.array(NAME).min(1).max(MAX_LABELS).optional(),
});

const taskRunsTopic = z.strictObject({
  kind: z.literal('task_runs'),
  /** a task id, or `*` for every task */
  task_id: NAME.default('*'),
});

const topic = z.discriminatedUnion('kind', [graphTopic, taskRunsTopic]);
export type Topic = z.infer<typeof topic>;

const clientFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auth'), token: z.string().min(1).max(8192) }),
  z.strictObject({
    type: z.literal('subscribe'),
    topics: z.array(topic).max(MAX_TOPICS),
    /** resume: replay the retained events after this seq */
    after_seq: z.number().int().min(0).optional(),
    /** the `stream` the client's seq came from; another one (the server restarted) means resync */
    stream: z.string().max(64).optional(),
  }),
  z.strictObject({ type: z.literal('ping') }),
]);
export type ClientFrame = z.infer<typeof clientFrame>;

/** Parses one client frame; a ServiceError (invalid_json, payload_too_deep, validation_error) says why not. */
export function parseClientFrame(message: ArrayBuffer, isBinary: boolean): ClientFrame {
  if (isBinary) throw new ServiceError('validation_error', 'frames are JSON text, not binary');
  const bytes = new Uint8Array(message);
  if (findTooDeep(bytes, MAX_FRAME_DEPTH) !== null) throw new ServiceError('payload_too_deep', `a frame nests deeper than ${MAX_FRAME_DEPTH}`);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new ServiceError('invalid_json', 'a frame is one JSON object');
  }
  const parsed = clientFrame.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 10).map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
    throw new ServiceError('validation_error', 'the frame does not match the feed protocol', { issues });
  }
  return parsed.data;
}

/** a subscription's topic with the names its realm goes by (a realm is named by id or name) */
export type BoundTopic = Topic & { readonly realmNames?: readonly string[] };

export function matches(topics: readonly BoundTopic[], event: FeedEvent): boolean {
  return topics.some((topic) => {
    if (topic.kind === 'task_runs') return event.topic === 'task_runs' && (topic.task_id === '*' || topic.task_id === event.taskId);
    if (event.topic !== 'graph' || event.realm === undefined || !(topic.realmNames ?? [topic.realm]).includes(event.realm)) return false;
    if (topic.labels === undefined || event.labels === null || event.labels === undefined) return true;
    return event.labels.some((label) => topic.labels?.includes(label));
  });
}

const frames = new WeakMap<FeedEvent, string>();

/** the event frame, serialized once however many connections receive it */
export function eventFrame(event: FeedEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = JSON.stringify({ type: 'event', seq: event.seq, at: event.at, topic: event.topic, event: event.event, data: event.data });
    frames.set(event, frame);
  }
  return frame;
}

export const errorFrame = (error: ServiceError): string =>
  JSON.stringify({ type: 'error', code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) });
