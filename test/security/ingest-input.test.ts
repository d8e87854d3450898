/**
 * NDJSON ingest refuses lines it cannot store as Unicode text or that nest too
 * deep: 400 bad_ndjson naming the line, nothing of the request written (the
 * all-or-nothing contract of ingest/README.md), a failed run recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { createPipeline, ingest, ndjson, rowsOf, type PipelineWithToken } from '../ingest/helpers.js';
import { expectError } from '../helpers/expect-status.js';

const deepLine = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('ingest: lines that are not storable text or nest too deep', () => {
  let server: TestServer;
  let owner: Session;
  let pipeline: PipelineWithToken;
  /** labels of the rows stored so far, newest first */
  const stored = ['kept'];

  beforeAll(async () => {
    ({ server, owner } = await oneOrg());
    pipeline = await createPipeline(server, owner);
    const first = await ingest(server, pipeline.token, ndjson([{ label: 'kept', n: 1 }]));
    expect(first.status).toBe(200);
  });
  afterAll(async () => server.stop());

  const expectRefused = async (body: string | Buffer, line: number, headers: Record<string, string> = {}) => {
    const response = await ingest(server, pipeline.token, body, headers);
    expectError(response, 400, 'bad_ndjson');
    expect(response.body.error.details.line).toBe(line);
    expect(typeof response.body.error.details.run_id).toBe('number');
    const rows = await rowsOf(server, owner, 'context_events');
    expect(rows.map((row) => row['label'])).toEqual(stored);
    return response;
  };

  it('a lone high surrogate escape in a value: line named, nothing written', async () => {
    await expectRefused(`{"label":"a"}\n{"label":"b","text":"x\\ud800y"}\n{"label":"c"}\n`, 2);
  });

  it('a lone low surrogate, a surrogate at the end of a string, and in a key', async () => {
    await expectRefused(`{"label":"a","t":"\\udc00"}\n`, 1);
    await expectRefused(`{"label":"a"}\n\n{"label":"b","t":"end\\udbff"}\n`, 3);
    await expectRefused(`{"label":"a"}\n{"\\ud801key":"v"}\n`, 2);
    await expectRefused(`{"label":"a","nested":{"deeper":["ok","\\ud800"]}}\n`, 1);
  });

  it('a valid surrogate pair is stored', async () => {
    const response = await ingest(server, pipeline.token, `{"label":"pair","t":"\\ud83d\\ude00"}\n`);
    expect(response.status).toBe(200);
    stored.unshift('pair');
    const rows = await rowsOf(server, owner, 'context_events');
    expect(rows.map((row) => row['label'])).toEqual(stored);
    expect(rows[0]?.['t']).toBe('😀');
  });

  it('invalid UTF-8 bytes: line named, nothing written', async () => {
    const bad = Buffer.concat([Buffer.from('{"label":"a"}\n{"label":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
    await expectRefused(bad, 2);
    const truncated = Buffer.concat([Buffer.from('{"label":"a"}\n{"label":"b"}\n{"label":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}\n')]);
    await expectRefused(truncated, 3);
  });

  for (const depth of [100, 1_000, 10_000, 100_000]) {
    it(`a line nested ${depth} deep: bad_ndjson with its line, /health answers right after`, async () => {
      const response = await expectRefused(`{"label":"a"}\n{"label":"b"}\n${deepLine(depth)}\n`, 3);
      expect(response.body.error.details.max_depth).toBe(64);
      expect((await server.request('GET', '/health')).status).toBe(200);
    });
  }

  it('deep arrays on the first line, sent as application/json (shippers do): the same bad_ndjson', async () => {
    await expectRefused(`${'['.repeat(5000)}${']'.repeat(5000)}\n{"label":"b"}\n`, 1, { 'content-type': 'application/json' });
  });

  it('brackets in strings do not count, and one line does not carry depth into the next', async () => {
    const lines = Array.from({ length: 3 }, (_, index) => `{"label":"s${index}","t":"${'['.repeat(200)}","n":${'['.repeat(40)}1${']'.repeat(40)}}`);
    const response = await ingest(server, pipeline.token, lines.join('\n') + '\n');
    expect(response.status).toBe(200);
    expect(response.body.rows_out).toBe(3);
    stored.unshift('s2', 's1', 's0');
  });

  it('the failed runs are recorded with bad_ndjson', async () => {
    const runs = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs?limit=200`, { token: owner.token });
    const failed = (runs.body.items as { status: string; error_code: string | null }[]).filter((run) => run.status === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(10);
    expect(new Set(failed.map((run) => run.error_code))).toEqual(new Set(['bad_ndjson']));
  });
});
