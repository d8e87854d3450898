/**
 * A fake of the notes API for the conformance run: same paths, status codes
 * and JSON shapes as the real one. Keep your fake next to your plugin.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_TOKEN = 'notes-good-token';

export async function startFakeNotesApi(): Promise<{ url: string; close(): Promise<void> }> {
  const notes = [{ id: 'n1', title: 'Runbook: deploys', updated_at: '2026-11-01T00:00:00Z' }];
  const server = createServer((request, response) => {
    const send = (status: number, body?: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body));
    };
    if (request.headers.authorization !== `Bearer ${FAKE_TOKEN}`) return send(401, { message: 'bad token' });
    const url = new URL(request.url ?? '/', 'http://fake');
    if (url.pathname === '/workspaces/ops') return send(200, { id: 'ops' });
    if (url.pathname === '/workspaces/ops/notes' && request.method === 'GET') return send(200, notes.filter((note) => note.title.includes(url.searchParams.get('q') ?? '')));
    if (url.pathname === '/workspaces/ops/notes' && request.method === 'POST') {
      let raw = '';
      request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      request.on('end', () => {
        const { title } = JSON.parse(raw) as { title: string };
        const note = { id: `n${notes.length + 1}`, title, updated_at: new Date(0).toISOString() };
        notes.push(note);
        send(201, { id: note.id, title: note.title });
      });
      return undefined;
    }
    return send(404, { message: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
