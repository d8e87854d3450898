/** A real NATS round trip (INFO, CONNECT, PING -> PONG) without pulling a client into the health path. */
import { connect } from 'node:net';

export function probeNats(url: string, timeoutMs = 1000): Promise<'ok' | 'down'> {
  const target = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    let pinged = false;
    let settled = false;
    const socket = connect({ host: target.hostname, port: Number(target.port || 4222) });
    const done = (status: 'ok' | 'down'): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(status);
    };
    socket.setTimeout(timeoutMs, () => done('down'));
    socket.on('error', () => done('down'));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (!pinged && received.startsWith('INFO ') && received.includes('\r\n')) {
        pinged = true;
        socket.write('CONNECT {"verbose":false,"pedantic":false,"name":"health-probe"}\r\nPING\r\n');
      }
      if (received.includes('PONG\r\n')) done('ok');
      else if (received.includes('-ERR')) done('down');
    });
  });
}
