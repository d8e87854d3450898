/**
 * A client of the WebSocket feed (`/ws`) for the suites: the `ws` package
 * against the real server, every frame kept in order, waits by `eventually`.
 */
import WebSocket from 'ws';
import { eventually } from '../helpers/eventually.js';
import type { TestServer } from '../helpers/server.js';

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

export class FeedClient {
  readonly frames: any[] = [];
  closed: Closed | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      this.frames.push(isBinary ? { binary: true } : JSON.parse(Buffer.from(data as Buffer).toString('utf8')));
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
    // an abrupt end is reported as close 1006 as well
    socket.on('error', () => undefined);
  }

  /** connects; `token` goes in `Sec-WebSocket-Protocol` as `bearer, <token>` */
  static async connect(server: TestServer, options: { readonly token?: string; readonly path?: string } = {}): Promise<FeedClient> {
    const base = server.url.replace(/^http/, 'ws').replace(/\/api\/v1$/, '');
    const socket = new WebSocket(`${base}${options.path ?? '/ws'}`, options.token === undefined ? [] : ['bearer', options.token]);
    const client = new FeedClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** connects and authenticates (header or first frame) and waits for `authenticated` */
  static async authenticated(server: TestServer, token: string, via: 'header' | 'frame' = 'header'): Promise<FeedClient> {
    const client = await FeedClient.connect(server, via === 'header' ? { token } : {});
    if (via === 'frame') client.send({ type: 'auth', token });
    await client.next((frame) => frame.type === 'authenticated', 'authenticated');
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** subscribes and waits for the `subscribed` (or `resync_required`) answer; returns it */
  async subscribe(topics: unknown[], resume: { after_seq?: number; stream?: string } = {}): Promise<any> {
    const from = this.frames.length;
    this.send({ type: 'subscribe', topics, ...resume });
    return this.next((frame) => frame.type === 'subscribed' || frame.type === 'error', 'subscribed', from);
  }

  /** the first frame (from index `from`) that satisfies `test` */
  next(test: (frame: any) => boolean, what: string, from = 0): Promise<any> {
    return eventually(() => this.frames.slice(from).find(test), { what });
  }

  /** the event frames so far */
  events(): any[] {
    return this.frames.filter((frame) => frame.type === 'event');
  }

  /** waits until `count` event frames matching `test` arrived; returns them */
  eventsWhere(test: (frame: any) => boolean, count: number, what: string): Promise<any[]> {
    return eventually(
      () => {
        const found = this.events().filter(test);
        return found.length >= count ? found : undefined;
      },
      { what },
    );
  }

  waitClosed(timeout = 10_000): Promise<Closed> {
    return eventually(() => this.closed ?? undefined, { what: 'the feed connection to close', timeout });
  }

  close(): void {
    this.socket.close();
  }
}
