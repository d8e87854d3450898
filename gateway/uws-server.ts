/**
 * The thin uWebSockets.js adapter: copies the request out of uWS's
 * stack-allocated objects, reads the body as raw bytes under the route's size
 * limit (413 as soon as the limit is crossed, without buffering the excess)
 * or, for a `stream` route, hands the body over as it arrives (pausing the
 * socket while the handler is behind), hands the request to the routing core
 * and writes the response corked, once the metadata store has committed what
 * the handler wrote (`committed`: writes of one event-loop turn share one
 * commit, and no client hears of a write before it is durable).
 */
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import uws from 'uWebSockets.js';
import { ServiceError } from '../runtime/errors.js';
import { isStreamBody, type HttpRequest, type HttpResponse, type ResponseStream } from './http.js';
import { errorResponse, Pipeline } from './pipeline.js';

export interface ListeningServer {
  readonly host: string;
  readonly port: number;
  /** stops accepting, waits for in-flight requests (up to `graceMs`) */
  close(graceMs?: number): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request ids: a random per-process prefix and a counter; unique without a random draw per request. */
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;
const nextRequestId = (): string => `${REQUEST_ID_PREFIX}-${(requestCounter++).toString(36)}`;

const statusLines = new Map<number, string>();
const statusLine = (status: number): string => {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
};

/** how much of a streamed body waits in memory for its handler before the socket is paused */
const STREAMED_BODY_BUFFER_BYTES = 1024 * 1024;
/**
 * An answer that comes before a streamed body's end waits while the rest of
 * the body is read and dropped (until the client pauses this long, for at most
 * that long and this much): closing a socket whose receive buffer still holds
 * the client's bytes sends a reset, and a reset can reach the client before it
 * has read the answer.
 */
const LINGER_IDLE_MS = 2000;
const LINGER_MAX_MS = 10_000;
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/** what the adapter waits for before it answers: null when nothing written is still uncommitted */
export type CommitBarrier = () => Promise<void> | null;

/** WebSocket routes served on the same app (the feed at /ws): installed before the HTTP routes, ended on close */
export interface SocketRoutes {
  install(app: uws.TemplatedApp): void;
  closeAll(): void;
}

export async function listen(pipeline: Pipeline, host: string, port: number, committed: CommitBarrier, sockets?: SocketRoutes): Promise<ListeningServer> {
  const app = uws.App();
  sockets?.install(app);
  let inFlight = 0;
  let draining = false;
  let drained: (() => void) | null = null;

  const finish = (): void => {
    inFlight -= 1;
    if (draining && inFlight === 0) drained?.();
  };

  app.any('/*', (res, req) => {
    inFlight += 1;
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      headers[key] = value;
    });
    const givenId = headers['x-request-id'];
    const requestId = givenId !== undefined && REQUEST_ID.test(givenId) ? givenId : nextRequestId();
    // the socket's peer, read now: uWS objects are valid only until the handler returns
    const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString('utf8');

    let aborted = false;
    let responded = false;
    const abortListeners: (() => void)[] = [];
    res.onAborted(() => {
      aborted = true;
      for (const listener of abortListeners.splice(0)) listener();
      if (!responded) {
        responded = true;
        finish();
      }
    });

    const writeHead = (response: HttpResponse): void => {
      res.writeStatus(statusLine(response.status));
      res.writeHeader('x-request-id', requestId);
      for (const [key, value] of Object.entries(response.headers ?? {})) res.writeHeader(key, value);
    };

    const send = (response: HttpResponse, closeConnection = false): void => {
      if (aborted || responded) return;
      const { body } = response;
      if (isStreamBody(body)) {
        res.cork(() => writeHead(response));
        body.stream(openStream());
        return;
      }
      responded = true;
      res.cork(() => {
        writeHead(response);
        res.end(body, closeConnection || draining);
      });
      finish();
    };

    /** the response stays in flight (and counted for draining) until it ends or the client goes */
    const openStream = (): ResponseStream => {
      let ended = false;
      const closeListeners: (() => void)[] = [];
      const close = (): void => {
        if (ended) return;
        ended = true;
        for (const listener of closeListeners.splice(0)) listener();
      };
      abortListeners.push(close);
      return {
        get closed() {
          return ended || aborted;
        },
        write: (chunk) => {
          if (ended || aborted) return false;
          res.cork(() => res.write(chunk));
          return true;
        },
        end: () => {
          if (ended || aborted) return;
          res.cork(() => res.end());
          responded = true;
          finish();
          close();
        },
        onClose: (listener) => {
          if (ended || aborted) listener();
          else closeListeners.push(listener);
        },
      };
    };

    const match = pipeline.match(method, path);
    const limit = Pipeline.maxBodyBytes(match);
    const tooLargeError = (): ServiceError =>
      new ServiceError('payload_too_large', `request body is over the ${limit}-byte limit of this route`, { limit_bytes: limit });
    const tooLarge = (): HttpResponse => errorResponse(tooLargeError());

    /** a streamed body the handler has not read to its end: the connection closes after the response */
    let unread = false;
    /** set by a streamed body: stop handing it to the handler and drop what still arrives */
    let dropRest: (() => void) | null = null;
    /** an early answer waiting for the rest of the body to be dropped (lingering close) */
    let lingering: (() => void) | null = null;
    let lingerTimer: NodeJS.Timeout | undefined;
    let lingerDeadline = 0;
    const flushLingering = (): void => {
      clearTimeout(lingerTimer);
      const answer = lingering;
      lingering = null;
      answer?.();
    };
    /**
     * (Re)arms the wait for the client's next bytes. A timer that fires after
     * a stalled event loop runs before the socket reads that piled up meanwhile,
     * so the flush waits one more turn (setImmediate runs after the poll phase).
     */
    const armLinger = (): void => {
      clearTimeout(lingerTimer);
      const wait = Math.min(LINGER_IDLE_MS, lingerDeadline - performance.now());
      lingerTimer = setTimeout(() => setImmediate(flushLingering), Math.max(0, wait));
    };

    /** sends, or for an answer before the body's end, first drops the rest of the body (bounded) */
    const sendAfterBody = (response: HttpResponse): void => {
      if (!unread || dropRest === null || aborted) return send(response, unread);
      lingering = () => send(response, true);
      lingerDeadline = performance.now() + LINGER_MAX_MS;
      armLinger();
      dropRest();
    };

    /** answers once what the handler wrote (or read uncommitted) is durable; a failed commit turns it into a 503 */
    const sendCommitted = (response: HttpResponse): void => {
      const pending = committed();
      if (pending === null) return sendAfterBody(response);
      pending.then(
        () => sendAfterBody(response),
        () => sendAfterBody(errorResponse(new ServiceError('service_unavailable', 'the metadata store could not commit this request; retry it'))),
      );
    };

    const dispatch = (body: Buffer, bodyStream?: AsyncIterable<Buffer>): void => {
      const request: HttpRequest = {
        method,
        path,
        query,
        headers,
        body,
        requestId,
        remoteAddress,
        ...(bodyStream ? { bodyStream } : {}),
        onAborted: (listener) => (aborted ? listener() : void abortListeners.push(listener)),
      };
      pipeline.handle(match, request).then(sendCommitted, () => {
        // handle() never rejects; this guards the process if that ever changes
        send(errorResponse(new ServiceError('internal_error', 'internal error')));
      });
    };

    const declared = headers['content-length'];
    const hasBody = (declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined;
    if (declared !== undefined && Number(declared) > limit) {
      // refuse before reading a byte; close so the unread body is not parsed as the next request
      send(tooLarge(), true);
      return;
    }
    if (Pipeline.streamsBody(match)) {
      const body = new Readable({ highWaterMark: STREAMED_BODY_BUFFER_BYTES, read: () => resumeReading() });
      let paused = false;
      const resumeReading = (): void => {
        if (!paused || aborted) return;
        paused = false;
        res.resume();
      };
      abortListeners.push(() => body.destroy(new ServiceError('validation_error', 'the client closed the connection before the body ended')));
      abortListeners.push(() => clearTimeout(lingerTimer));
      if (!hasBody) body.push(null);
      else {
        unread = true;
        let received = 0;
        let dropped = 0;
        dropRest = () => {
          if (!body.destroyed) body.destroy();
          // the handler no longer reads: take the rest off the socket
          if (paused && !aborted) {
            paused = false;
            res.resume();
          }
        };
        res.onData((chunk, isLast) => {
          if (body.destroyed) {
            dropped += chunk.byteLength;
            if (isLast) unread = false;
            if (lingering === null) return;
            if (isLast || dropped > LINGER_MAX_BYTES) flushLingering();
            else armLinger();
            return;
          }
          received += chunk.byteLength;
          // the handler reading the stream fails with 413, and answers it
          if (received > limit) return void body.destroy(tooLargeError());
          // uWS reuses the chunk's memory after this callback returns: copy it
          const wantsMore = body.push(Buffer.from(chunk.slice(0)));
          if (isLast) {
            unread = false;
            body.push(null);
            // uWS hands over what it had buffered even while paused, the end included: a socket left
            // paused would never read the next request on this keep-alive connection
            if (paused && !aborted) {
              paused = false;
              res.resume();
            }
          } else if (!wantsMore && !paused && !aborted) {
            // the handler is behind: stop reading from the socket until it asks for more
            paused = true;
            res.pause();
          }
        });
      }
      dispatch(Buffer.alloc(0), body);
      return;
    }
    if (!hasBody) {
      dispatch(Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    // a declared length (at most the limit, checked above): one buffer of that size, each chunk copied in once
    // (not a copy per chunk plus a concatenation: an 8 MB ingest body was held twice, issue 20)
    const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : -1;
    const whole = length > 0 ? Buffer.allocUnsafe(length) : null;
    res.onData((chunk, isLast) => {
      if (responded) return;
      received += chunk.byteLength;
      if (received > limit || (whole !== null && received > whole.length)) {
        send(tooLarge(), true);
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it
      if (whole !== null) whole.set(new Uint8Array(chunk), received - chunk.byteLength);
      else chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      if (whole !== null) dispatch(received === whole.length ? whole : whole.subarray(0, received));
      else dispatch(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
    });
  });

  const listenSocket = await new Promise<uws.us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`cannot listen on ${host}:${port} (address in use or not permitted)`));
    });
  });
  const boundPort = uws.us_socket_local_port(listenSocket);

  return {
    host,
    port: boundPort,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        if (draining) {
          resolve();
          return;
        }
        draining = true;
        uws.us_listen_socket_close(listenSocket);
        sockets?.closeAll();
        if (inFlight === 0) {
          resolve();
          return;
        }
        const timer = setTimeout(resolve, graceMs);
        drained = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
  };
}
