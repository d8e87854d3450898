/**
 * What every fake of an outside HTTP API shares: listening on a free
 * loopback port, stopping with its keep-alive connections, and the rate
 * limit a test switches on (`throttleNext`/`rateLimitNext`) that makes the
 * next requests answer 429 with Retry-After.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1, a free port; resolves with the base URL. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes the server and the clients' idle keep-alive connections with it. */
export const stopServer = (server: Server): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.closeAllConnections();
    server.close((error) => (error ? reject(error) : resolve()));
  });

export class Throttle {
  private left = 0;
  private seconds = 1;

  /** the next `count` requests are refused, asking to retry after `seconds` */
  next(count = 1, seconds = 1): void {
    this.left = count;
    this.seconds = seconds;
  }

  /** the Retry-After seconds when this request is refused, else null */
  take(): number | null {
    if (this.left <= 0) return null;
    this.left -= 1;
    return this.seconds;
  }
}
