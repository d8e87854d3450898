/**
 * The WebSocket feed at `/ws` (and `/api/v1/ws`) on the uWebSockets.js app:
 * authentication (the `Sec-WebSocket-Protocol` header `bearer, <token>`, or a
 * first `auth` frame within WS_AUTH_TIMEOUT_MS), subscriptions checked
 * against the caller's permissions and organization, replay of retained
 * events on resume, and the backpressure bound. The protocol, its frames and
 * close codes are README's "Live feeds" section.
 */
import type { Logger } from 'pino';
import type uws from 'uWebSockets.js';
import type { AuthContext } from '../runtime/auth/context.js';
import type { Permission } from '../runtime/auth/permissions.js';
import type { ServiceConfig } from '../runtime/config.js';
import { ServiceError } from '../runtime/errors.js';
import type { OrgId } from '../runtime/store/types.js';
import type { ChangeFeed, FeedEvent } from '../runtime/feed/change-feed.js';
import {
  bearerProtocol,
  errorFrame,
  eventFrame,
  matches,
  MAX_CLIENT_FRAME_BYTES,
  parseClientFrame,
  type BoundTopic,
  type ClientFrame,
  type Topic,
} from './ws-protocol.js';

/** close codes (README, Live feeds) */
const CLOSE = { unauthorized: 4401, forbidden: 4403, slowConsumer: 4008, goingAway: 1001 } as const;
const FEED_PATHS = ['/ws', '/api/v1/ws'] as const;
/** how often an open connection's credential is checked again (revoked keys, expired tokens, changed roles) */
const RECHECK_MS = 60_000;
/**
 * How long a closing connection may take to read what was sent before its
 * close frame; then it is cut (the client sees 1006). Its memory is bounded
 * meanwhile: nothing more is sent to it.
 */
const CLOSE_GRACE_MS = 60_000;
/** the same when the server stops */
const STOP_GRACE_MS = 1000;

export interface FeedSocketDeps {
  readonly feed: ChangeFeed;
  readonly authenticate: (authorization: string) => Promise<AuthContext>;
  /** the names a realm of the organization goes by (its id and name); throws not_found */
  readonly realmNames: (orgId: OrgId, realm: string) => Promise<readonly string[]>;
  /** throws not_found for a task the organization does not have */
  readonly taskExists: (orgId: OrgId, taskId: string) => Promise<void>;
  readonly config: ServiceConfig['wsFeed'];
  readonly logger: Logger;
}

interface Connection {
  token: string | null;
  auth: AuthContext | null;
  /** the header carried a credential the identity refused */
  refused: boolean;
  topics: readonly BoundTopic[];
  closed: boolean;
  unlisten: (() => void) | null;
  timer: NodeJS.Timeout | null;
  ws: uws.WebSocket<Connection> | null;
}

const PERMISSION: Record<Topic['kind'], Permission> = { graph: 'graph:read', task_runs: 'task:read' };

export class FeedSockets {
  private readonly open = new Set<Connection>();

  constructor(private readonly deps: FeedSocketDeps) {}

  install(app: uws.TemplatedApp): void {
    const behavior: uws.WebSocketBehavior<Connection> = {
      maxPayloadLength: MAX_CLIENT_FRAME_BYTES,
      // our own bound decides (4008); uWS must not drop messages silently below it
      maxBackpressure: this.deps.config.maxBufferedBytes * 4,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.opened(ws),
      message: (ws, message, isBinary) => this.received(ws.getUserData(), message, isBinary),
      close: (ws) => this.closed(ws.getUserData()),
    };
    for (const path of FEED_PATHS) app.ws<Connection>(path, behavior);
  }

  /** ends every connection (the server is stopping) */
  closeAll(): void {
    for (const connection of [...this.open]) this.end(connection, CLOSE.goingAway, 'the server is stopping', STOP_GRACE_MS);
  }

  private upgrade(res: uws.HttpResponse, req: uws.HttpRequest, context: uws.us_socket_context_t): void {
    const key = req.getHeader('sec-websocket-key');
    const extensions = req.getHeader('sec-websocket-extensions');
    const { token, protocol } = bearerProtocol(req.getHeader('sec-websocket-protocol'));
    const connection: Connection = { token: null, auth: null, refused: false, topics: [], closed: false, unlisten: null, timer: null, ws: null };
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const accept = (): void => {
      if (aborted) return;
      res.cork(() => res.upgrade(connection, key, protocol, extensions, context));
    };
    if (token === undefined) return accept();
    connection.token = token;
    this.deps.authenticate(`Bearer ${token}`).then(
      (auth) => {
        connection.auth = auth;
        accept();
      },
      () => {
        // told over the socket, with the documented close code: a browser never sees an upgrade's HTTP status
        connection.refused = true;
        accept();
      },
    );
  }

  private opened(ws: uws.WebSocket<Connection>): void {
    const connection = ws.getUserData();
    connection.ws = ws;
    this.open.add(connection);
    if (connection.refused) return this.end(connection, CLOSE.unauthorized, 'the credential was refused');
    if (connection.auth) return this.authenticated(connection, connection.auth);
    connection.timer = setTimeout(() => this.end(connection, CLOSE.unauthorized, 'no auth frame in time'), this.deps.config.authTimeoutMs);
  }

  private received(connection: Connection, message: ArrayBuffer, isBinary: boolean): void {
    let frame: ClientFrame;
    try {
      frame = parseClientFrame(message, isBinary);
    } catch (error) {
      if (connection.auth === null) return this.end(connection, CLOSE.unauthorized, 'the first frame must be {"type":"auth","token":...}');
      return this.send(connection, errorFrame(asServiceError(error)));
    }
    if (connection.auth === null) {
      if (frame.type !== 'auth' || connection.token !== null)
        return this.end(connection, CLOSE.unauthorized, 'the first frame must be {"type":"auth","token":...}');
      connection.token = frame.token;
      this.deps.authenticate(`Bearer ${frame.token}`).then(
        (auth) => this.authenticated(connection, auth),
        () => this.end(connection, CLOSE.unauthorized, 'the credential was refused'),
      );
      return;
    }
    if (frame.type === 'ping') return this.send(connection, JSON.stringify({ type: 'pong', seq: this.deps.feed.latestSeq(connection.auth.orgId) }));
    if (frame.type === 'auth') return this.send(connection, errorFrame(new ServiceError('conflict', 'this connection is already authenticated')));
    this.subscribe(connection, connection.auth, frame).catch((error: unknown) => {
      if (!(error instanceof ServiceError)) this.deps.logger.error({ err: error }, 'feed subscription failed');
      this.send(connection, errorFrame(asServiceError(error)));
    });
  }

  private authenticated(connection: Connection, auth: AuthContext): void {
    if (connection.closed) return;
    clearTimeout(connection.timer ?? undefined);
    connection.auth = auth;
    connection.unlisten = this.deps.feed.listen(auth.orgId, (event) => this.deliver(connection, event));
    connection.timer = setInterval(() => void this.recheck(connection), RECHECK_MS);
    connection.timer.unref();
    const { feed } = this.deps;
    this.send(connection, JSON.stringify({ type: 'authenticated', organization_id: auth.orgId, stream: feed.stream, seq: feed.latestSeq(auth.orgId) }));
  }

  private async subscribe(connection: Connection, auth: AuthContext, frame: Extract<ClientFrame, { type: 'subscribe' }>): Promise<void> {
    const bound: BoundTopic[] = [];
    for (const topic of frame.topics) {
      const permission = PERMISSION[topic.kind];
      if (!auth.permissions.has(permission)) {
        throw new ServiceError('forbidden', `the topic ${topic.kind} needs the permission "${permission}"`, { permission });
      }
      if (topic.kind === 'graph') bound.push({ ...topic, realmNames: await this.deps.realmNames(auth.orgId, topic.realm) });
      else {
        if (topic.task_id !== '*') await this.deps.taskExists(auth.orgId, topic.task_id);
        bound.push(topic);
      }
    }
    if (connection.closed) return;
    // from here on synchronous: the replay and the live events neither overlap nor leave a gap
    const { feed } = this.deps;
    connection.topics = bound;
    const latest = feed.latestSeq(auth.orgId);
    const topics = bound.map(({ realmNames: _names, ...topic }) => topic);
    const replay =
      frame.after_seq === undefined
        ? null
        : frame.stream !== undefined && frame.stream !== feed.stream
          ? 'other_stream'
          : feed.replay(auth.orgId, frame.after_seq);
    if (replay !== null && (replay === 'other_stream' || !replay.ok)) {
      const oldest = replay === 'other_stream' ? null : replay.oldestSeq;
      this.send(connection, JSON.stringify({ type: 'resync_required', after_seq: frame.after_seq, oldest_seq: oldest, stream: feed.stream, seq: latest }));
      this.send(connection, JSON.stringify({ type: 'subscribed', topics, stream: feed.stream, seq: latest, replayed: 0 }));
      return;
    }
    const events = replay === null ? [] : replay.events.filter((event) => matches(bound, event));
    this.send(connection, JSON.stringify({ type: 'subscribed', topics, stream: feed.stream, seq: latest, replayed: events.length }));
    for (const event of events) this.send(connection, eventFrame(event));
  }

  private deliver(connection: Connection, event: FeedEvent): void {
    if (connection.topics.length > 0 && matches(connection.topics, event)) this.send(connection, eventFrame(event));
  }

  /** sends, or closes a consumer that does not keep up (4008) rather than buffering without bound */
  private send(connection: Connection, frame: string): void {
    const { ws } = connection;
    if (connection.closed || ws === null) return;
    if (ws.getBufferedAmount() > this.deps.config.maxBufferedBytes) {
      return this.end(connection, CLOSE.slowConsumer, 'the client does not read fast enough');
    }
    if (ws.send(frame, false) === 2) this.end(connection, CLOSE.slowConsumer, 'the client does not read fast enough');
  }

  /** the credential again: a revoked key or an expired token closes with 4401, a lost permission with 4403 */
  private async recheck(connection: Connection): Promise<void> {
    if (connection.closed || connection.token === null) return;
    let auth: AuthContext;
    try {
      auth = await this.deps.authenticate(`Bearer ${connection.token}`);
    } catch {
      return this.end(connection, CLOSE.unauthorized, 'the credential is no longer valid');
    }
    const lost = connection.topics.find((topic) => !auth.permissions.has(PERMISSION[topic.kind]));
    if (lost) return this.end(connection, CLOSE.forbidden, `the permission "${PERMISSION[lost.kind]}" was withdrawn`);
    connection.auth = auth;
  }

  private end(connection: Connection, code: number, reason: string, graceMs = CLOSE_GRACE_MS): void {
    const { ws } = connection;
    if (connection.closed || ws === null) return;
    this.release(connection);
    ws.end(code, reason);
    // a client that reads nothing never takes the close frame: cut it after a grace period
    setTimeout(() => {
      if (this.open.has(connection)) ws.close();
    }, graceMs).unref();
  }

  private closed(connection: Connection): void {
    this.release(connection);
    this.open.delete(connection);
  }

  /** stops delivering and timing; the socket may still be flushing its close frame */
  private release(connection: Connection): void {
    connection.closed = true;
    connection.unlisten?.();
    connection.unlisten = null;
    clearTimeout(connection.timer ?? undefined);
    clearInterval(connection.timer ?? undefined);
  }
}

function asServiceError(error: unknown): ServiceError {
  return error instanceof ServiceError ? error : new ServiceError('internal_error', 'the frame could not be handled');
}
