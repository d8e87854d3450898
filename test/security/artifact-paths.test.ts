/**
 * `artifacts/` holds what runs wrote: PUT /files/content refuses it (403). The
 * check sees the path after canonical normalization (NFC, `.` and empty
 * segments dropped) and compares the folder name folded, so no spelling that
 * reaches the reserved folder on some file system gets through: case variants
 * (case-insensitive file systems), percent-encoding (once more than the URL's),
 * NFKC lookalikes (fullwidth letters), zero-width characters, trailing dots
 * and spaces (Windows drops them). `..` is refused before any of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

let server: TestServer;
let owner: Session;

const put = (path: string, content = 'forged') =>
  server.request('PUT', `/files/content?path=${encodeURIComponent(path)}`, { token: owner.token, body: Buffer.from(content) });

const listed = async (): Promise<string[]> => {
  const answer = await server.request('GET', '/files?limit=200', { token: owner.token });
  expect(answer.status).toBe(200);
  return (answer.body.items as { path: string }[]).map((file) => file.path).sort();
};

beforeAll(async () => ({ server, owner } = await oneOrg({}, { name: 'Artifact Paths' })));
afterAll(async () => {
  await server?.stop();
});

describe('PUT /files/content under artifacts/, however spelled', () => {
  const reserved: [string, string][] = [
    ['the folder itself', 'artifacts/run_x/report.md'],
    ['capitalized', 'Artifacts/run_x/report.md'],
    ['upper case', 'ARTIFACTS/x'],
    ['mixed case', 'aRtIfAcTs/run_x/x'],
    ['a leading ./', './artifacts/x'],
    ['a leading /', '/artifacts/x'],
    ['doubled separators', 'artifacts//x'],
    ['./ inside', 'artifacts/./x'],
    ['percent-encoded once more (%61)', '%61rtifacts/x'],
    ['percent-encoded twice more (%2561)', '%2561rtifacts/x'],
    ['an encoded separator after the name', 'artifacts%2Fx'],
    ['fullwidth letters (NFKC)', '\uff41\uff52\uff54\uff49\uff46\uff41\uff43\uff54\uff53/x'],
    ['a zero-width space inside', 'arti\u200bfacts/x'],
    ['a soft hyphen inside', 'arti\u00adfacts/x'],
    ['a trailing dot', 'artifacts./x'],
    ['trailing dots and spaces', 'artifacts . ./x'],
    ['a trailing space, capitalized', 'Artifacts /x'],
  ];

  for (const [label, path] of reserved) {
    it(`refuses ${label}: ${JSON.stringify(path)}`, async () => {
      const response = await put(path);
      expectError(response, 403, 'forbidden');
      expect(response.body.error.message).toContain('artifacts/');
    });
  }

  it('refuses climbing back into it (a/../artifacts/x) as a bad path', async () => {
    for (const path of ['a/../artifacts/x', 'x/y/../../artifacts/z', '../artifacts/x']) {
      const response = await put(path);
      expectError(response, 400, 'validation_error');
    }
  });

  it('wrote none of them; names that merely contain the word are ordinary files', async () => {
    const ordinary = ['reports/artifacts/x', 'artifactsx/y', 'my-artifacts/x', 'artifact/x', '\u00e1rtifacts/x', 'artifacts.md'];
    for (const path of ordinary) {
      const response = await put(path, 'fine');
      expect(response.status, `${path}: ${response.text}`).toBe(201);
    }
    expect(await listed()).toEqual(ordinary.map((path) => path.normalize('NFC')).sort());
  });

  it('delete under artifacts/ stays allowed (a 404 for a file that is not there, not a 403)', async () => {
    const response = await server.request('DELETE', `/files/content?path=${encodeURIComponent('Artifacts/run_x/report.md')}`, { token: owner.token });
    expect(response.status).toBe(404);
  });
});

describe('paths are NFC-normalized', () => {
  it('a decomposed name and its composed form are the same file', async () => {
    const decomposed = 'notes/cafe\u0301.txt';
    const composed = 'notes/caf\u00e9.txt';
    const written = await put(decomposed, 'v1');
    expect(written.status).toBe(201);
    expect(written.body.path).toBe(composed);
    const replaced = await put(composed, 'v2');
    expect(replaced.body.path).toBe(composed);
    const read = await server.request('GET', `/files/info?path=${encodeURIComponent(decomposed)}`, { token: owner.token });
    expectStatus(read, 200).toMatchObject({ path: composed, size: 2 });
    expect((await listed()).filter((path) => path.startsWith('notes/'))).toEqual([composed]);
  });
});
