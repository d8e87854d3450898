/**
 * The audio WebSocket of a voice session, `/api/v1/voice/sessions/:id/ws`
 * (and `/voice/sessions/:id/ws`), on the uWebSockets.js app. Authenticated at
 * the upgrade by the session's client token (`?token=` or the
 * `Sec-WebSocket-Protocol` header `bearer, <token>`): a missing, wrong or
 * expired token is refused with HTTP 401 and the error envelope, a session
 * already connected with 409, and the whole path with 404 `feature_disabled`
 * while feature `voice` is off. Binary frames are audio in the session's input
 * format; text frames are JSON control frames. The protocol is README's
 * "Voice sessions" section.
 */
import { STATUS_CODES } from 'node:http';
import type { Logger } from 'pino';
import type uws from 'uWebSockets.js';
import { z } from 'zod';
import type { LiveVoiceSession } from '../domains/voice/live-session.js';
import type { VoiceService, VoiceTicket } from '../domains/voice/service.js';
import { ServiceError } from '../runtime/errors.js';
import { featureDisabled } from './features.js';
import { bearerProtocol } from './ws-protocol.js';

const VOICE_PATHS = ['/api/v1/voice/sessions/:id/ws', '/voice/sessions/:id/ws'] as const;
/** 20 ms of PCM16 at 24 kHz is 960 bytes; a client may send up to a second at once */
const MAX_FRAME_BYTES = 64 * 1024;
/** a client that does not read its audio: closed rather than buffered without bound */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const CLOSE_SLOW_CONSUMER = 4008;

const controlFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('commit') }),
  z.strictObject({ type: z.literal('end') }),
  z.strictObject({ type: z.literal('approval'), approval_id: z.string().min(1).max(100), approved: z.boolean() }),
]);

interface Connection {
  readonly ticket: VoiceTicket;
  session: LiveVoiceSession | null;
  ws: uws.WebSocket<Connection> | null;
  closed: boolean;
}

export interface VoiceSocketDeps {
  readonly voice: VoiceService;
  readonly enabled: boolean;
  readonly logger: Logger;
}

export class VoiceSockets {
  private readonly open = new Set<Connection>();

  constructor(private readonly deps: VoiceSocketDeps) {}

  install(app: uws.TemplatedApp): void {
    const behavior: uws.WebSocketBehavior<Connection> = {
      maxPayloadLength: MAX_FRAME_BYTES,
      maxBackpressure: MAX_BUFFERED_BYTES * 2,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.opened(ws),
      message: (ws, message, isBinary) => this.received(ws.getUserData(), message, isBinary),
      close: (ws) => this.closed(ws.getUserData()),
    };
    for (const path of VOICE_PATHS) app.ws<Connection>(path, behavior);
  }

  closeAll(): void {
    for (const connection of [...this.open]) {
      if (connection.session !== null) this.deps.voice.endLive(connection.session.id, 'shutdown');
      else this.end(connection, 1001, 'the server is stopping');
    }
  }

  private upgrade(res: uws.HttpResponse, req: uws.HttpRequest, context: uws.us_socket_context_t): void {
    // read everything now: uWS's request object is valid only until this returns
    const sessionId = req.getParameter(0) ?? '';
    const key = req.getHeader('sec-websocket-key');
    const extensions = req.getHeader('sec-websocket-extensions');
    const offered = bearerProtocol(req.getHeader('sec-websocket-protocol'));
    const token = new URLSearchParams(req.getQuery() ?? '').get('token') ?? offered.token;
    let aborted = false;
    res.onAborted(() => (aborted = true));
    if (!this.deps.enabled) return refuse(res, featureDisabled('voice'));
    if (token === undefined || token === '' || token.length > 200 || sessionId.length > 100) {
      return refuse(res, new ServiceError('unauthorized', 'a voice session token is required (?token= or Sec-WebSocket-Protocol: bearer, <token>)'));
    }
    this.deps.voice.authorize(sessionId, token).then(
      (ticket) => {
        if (aborted) return this.deps.voice.abandon(ticket);
        const connection: Connection = { ticket, session: null, ws: null, closed: false };
        res.cork(() => res.upgrade(connection, key, offered.protocol, extensions, context));
      },
      (error: unknown) => {
        if (aborted) return;
        if (!(error instanceof ServiceError)) this.deps.logger.error({ err: error, session: sessionId }, 'voice session authorization failed');
        refuse(res, error instanceof ServiceError ? error : new ServiceError('internal_error', 'internal error'));
      },
    );
  }

  private opened(ws: uws.WebSocket<Connection>): void {
    const connection = ws.getUserData();
    connection.ws = ws;
    this.open.add(connection);
    connection.session = this.deps.voice.connect(connection.ticket, {
      sendJson: (event) => this.send(connection, JSON.stringify(event), false),
      sendAudio: (bytes) => this.send(connection, bytes, true),
      close: (code, reason) => this.end(connection, code, reason),
    });
  }

  private received(connection: Connection, message: ArrayBuffer, isBinary: boolean): void {
    const { session } = connection;
    if (session === null || connection.closed) return;
    if (isBinary) {
      // uWS reuses the message's memory after this callback returns: copy it
      session.clientAudio(Buffer.from(new Uint8Array(message).slice()));
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(message).toString('utf8'));
    } catch {
      return this.send(connection, JSON.stringify({ type: 'error', code: 'invalid_json', message: 'a text frame must be JSON' }), false);
    }
    const frame = controlFrame.safeParse(parsed);
    if (!frame.success) {
      const issues = frame.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
      return this.send(connection, JSON.stringify({ type: 'error', code: 'validation_error', message: 'unknown or malformed control frame', issues }), false);
    }
    session.clientControl(frame.data, null);
  }

  private send(connection: Connection, data: string | Buffer, binary: boolean): void {
    const { ws } = connection;
    if (connection.closed || ws === null) return;
    if (ws.getBufferedAmount() > MAX_BUFFERED_BYTES) return this.end(connection, CLOSE_SLOW_CONSUMER, 'the client does not read fast enough');
    // corked: flushed now, not when the loop next polls (after the store's commits of this turn)
    ws.cork(() => ws.send(data, binary));
  }

  private end(connection: Connection, code: number, reason: string): void {
    const { ws } = connection;
    if (connection.closed || ws === null) return;
    connection.closed = true;
    ws.end(code, reason);
  }

  private closed(connection: Connection): void {
    connection.closed = true;
    this.open.delete(connection);
    connection.session?.clientClosed();
  }
}

function refuse(res: uws.HttpResponse, error: ServiceError): void {
  res.cork(() => {
    res.writeStatus(`${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`);
    res.writeHeader('content-type', 'application/json');
    res.end(JSON.stringify(error.toEnvelope()), true);
  });
}
