import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { columnsOf, createPipeline, ingest, ndjson, rowsOf, type PipelineWithToken } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/ingest/${name}`, import.meta.url));

async function rowCount(server: TestServer, session: Session, table: string, realm = 'default'): Promise<number> {
  const response = await server.request('GET', `/context/tables?realm=${realm}`, { token: session.token });
  const found = (response.body.items as { name: string; row_count: number }[]).find((item) => item.name === table);
  return found ? found.row_count : 0;
}

describe('NDJSON ingest into context tables', () => {
  let server: TestServer, alice: Session;
  beforeAll(async () => ({ server, owner: alice } = await oneOrg({}, { name: 'Alice Inc' })));
  afterAll(async () => server.stop());

  /** Each test writes to its own realm so row counts and columns are its own. */
  async function pipelineIn(realm: string, extra: Record<string, unknown> = {}): Promise<PipelineWithToken> {
    const created = await server.request('POST', '/realms', { token: alice.token, body: { name: realm } });
    expect(created.status).toBe(201);
    return createPipeline(server, alice, { realm, ...extra });
  }

  it('writes every line as a row with the default columns and answers after commit', async () => {
    const pipeline = await pipelineIn('basic');
    const before = Date.now();
    const response = await ingest(
      server,
      pipeline.token,
      ndjson([
        { at: '2025-01-02T03:04:05.678Z', label: 'deploy', body: 'api v2 rolled out', service: 'api' },
        { at: '2025-01-02T05:04:05+02:00', label: 'build', body: { text: 'nested body' }, service: 'web' },
        { at: 1735787045, label: 'epoch-seconds' },
        { at: 1735787045123, label: 'epoch-millis' },
        { label: 'no at', at: null },
      ]),
    );
    const after = Date.now();
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['rows_in', 'rows_out', 'run_id']);
    expect(response.body.rows_in).toBe(5);
    expect(response.body.rows_out).toBe(5);
    expect(Number.isInteger(response.body.run_id)).toBe(true);

    const rows = await rowsOf(server, alice, 'context_events', 'basic');
    expect(rows.length).toBe(5);
    const byLabel = Object.fromEntries(rows.map((row) => [row['label'], row]));
    expect(byLabel['deploy']).toEqual({ at: '2025-01-02T03:04:05.678Z', label: 'deploy', body: 'api v2 rolled out', props: null, service: 'api' });
    expect(byLabel['build']).toEqual({ at: '2025-01-02T03:04:05.000Z', label: 'build', body: '{"text":"nested body"}', props: null, service: 'web' });
    expect(byLabel['epoch-seconds']?.['at']).toBe('2025-01-02T03:04:05.000Z');
    expect(byLabel['epoch-millis']?.['at']).toBe('2025-01-02T03:04:05.123Z');
    const arrival = Date.parse(String(byLabel['no at']?.['at']));
    expect(arrival).toBeGreaterThanOrEqual(before - 1);
    expect(arrival).toBeLessThanOrEqual(after + 1);
    // newest first: the arrival-time row (now) before the 2025 rows
    expect(rows[0]?.['label']).toBe('no at');
  });

  it('turns each new top-level property into a Utf8 column and keeps reserved names out of columns', async () => {
    const pipeline = await pipelineIn('growth');
    const response = await ingest(
      server,
      pipeline.token,
      ndjson([{ label: 'a', count: 3, ok: true, tags: ['x', 'y'], meta: { depth: 1 }, props: { given: 'by client' }, rowid: 7, PROPS: 'upper' }]),
    );
    expect(response.status).toBe(200);
    const tables = await server.request('GET', '/context/tables?realm=growth', { token: alice.token });
    expect(tables.status).toBe(200);
    expect(tables.body.items).toEqual([
      {
        realm: 'growth',
        name: 'context_events',
        row_count: 1,
        columns: [
          { name: 'at', type: 'timestamp' },
          { name: 'label', type: 'utf8' },
          { name: 'body', type: 'utf8' },
          { name: 'props', type: 'binary' },
          { name: 'count', type: 'utf8' },
          { name: 'ok', type: 'utf8' },
          { name: 'tags', type: 'utf8' },
          { name: 'meta', type: 'utf8' },
        ],
      },
    ]);
    const [row] = await rowsOf(server, alice, 'context_events', 'growth');
    expect(row).toMatchObject({ label: 'a', count: '3', ok: 'true', tags: '["x","y"]', meta: '{"depth":1}' });
    expect(row?.['props']).toEqual({ props: { given: 'by client' }, rowid: 7, PROPS: 'upper' });

    // a later request adds only what is new; a name equal up to case to a column stays in props
    await ingest(server, pipeline.token, ndjson([{ label: 'b', count: 4, region: 'eu', Count: 'shadow' }]));
    expect(await columnsOf(server, alice, 'context_events', 'growth')).toEqual(['at', 'label', 'body', 'props', 'count', 'ok', 'tags', 'meta', 'region']);
    const latest = (await rowsOf(server, alice, 'context_events', 'growth')).find((item) => item['label'] === 'b');
    expect(latest).toMatchObject({ count: '4', region: 'eu', props: { Count: 'shadow' } });
  });

  it('adds at most 32 new columns per request, in first-appearance order; the 33rd goes to props', async () => {
    const pipeline = await pipelineIn('wide');
    const first: Record<string, unknown> = { label: 'wide' };
    for (let index = 1; index <= 20; index++) first[`k${String(index).padStart(2, '0')}`] = index;
    const second: Record<string, unknown> = { label: 'wider' };
    for (let index = 21; index <= 40; index++) second[`k${String(index).padStart(2, '0')}`] = index;
    const response = await ingest(server, pipeline.token, ndjson([first, second]));
    expect(response.status).toBe(200);
    const expected = Array.from({ length: 32 }, (_, index) => `k${String(index + 1).padStart(2, '0')}`);
    expect(await columnsOf(server, alice, 'context_events', 'wide')).toEqual(['at', 'label', 'body', 'props', ...expected]);
    const rows = await rowsOf(server, alice, 'context_events', 'wide');
    const wider = rows.find((row) => row['label'] === 'wider');
    expect(wider?.['k32']).toBe('32');
    expect(wider?.['props']).toEqual({ k33: 33, k34: 34, k35: 35, k36: 36, k37: 37, k38: 38, k39: 39, k40: 40 });
    expect(rows.find((row) => row['label'] === 'wide')?.['props']).toBeNull();

    // the next request may add the rest
    await ingest(server, pipeline.token, ndjson([{ label: 'rest', k33: 'x' }]));
    expect(await columnsOf(server, alice, 'context_events', 'wide')).toContain('k33');
  });

  it('keeps extras in props with X-Schema-Evolve: false', async () => {
    const pipeline = await pipelineIn('frozen');
    await ingest(server, pipeline.token, ndjson([{ label: 'seed', service: 'api' }]));
    const response = await ingest(server, pipeline.token, ndjson([{ label: 'late', service: 'web', region: 'eu', cost: 1.5 }]), {
      'x-schema-evolve': 'false',
    });
    expect(response.status).toBe(200);
    expect(await columnsOf(server, alice, 'context_events', 'frozen')).toEqual(['at', 'label', 'body', 'props', 'service']);
    const late = (await rowsOf(server, alice, 'context_events', 'frozen')).find((row) => row['label'] === 'late');
    expect(late).toMatchObject({ service: 'web', props: { region: 'eu', cost: 1.5 } });
  });

  it('lets concurrent requests that add the same new column all succeed', async () => {
    const pipeline = await pipelineIn('race');
    const bodies = Array.from({ length: 6 }, (_, index) =>
      ndjson(Array.from({ length: 50 }, (_, row) => ({ label: `r${index}`, shared: `${index}-${row}`, [`own_${index}`]: row }))),
    );
    const responses = await Promise.all(bodies.map((body) => ingest(server, pipeline.token, body)));
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(responses.map((response) => response.body.rows_out)).toEqual([50, 50, 50, 50, 50, 50]);
    const columns = await columnsOf(server, alice, 'context_events', 'race');
    expect(columns.filter((name) => name === 'shared')).toEqual(['shared']);
    expect(columns.filter((name) => name.startsWith('own_')).sort()).toEqual(['own_0', 'own_1', 'own_2', 'own_3', 'own_4', 'own_5']);
    expect(await rowCount(server, alice, 'context_events', 'race')).toBe(300);
    const rows = await rowsOf(server, alice, 'context_events', 'race');
    expect(rows.every((row) => typeof row['shared'] === 'string')).toBe(true);
  });

  it('rejects the whole body when line 3 of 5 is bad, writes nothing, and names the line', async () => {
    const pipeline = await pipelineIn('badline');
    await ingest(server, pipeline.token, ndjson([{ label: 'seed' }]));
    const response = await ingest(server, pipeline.token, fixture('ingest-bad-line-3-of-5.ndjson'));
    expectError(response, 400, 'bad_ndjson');
    expect(response.body.error.details.line).toBe(3);
    expect(response.body.error.message).toContain('line 3');
    expect(await rowCount(server, alice, 'context_events', 'badline')).toBe(1);
    expect(await columnsOf(server, alice, 'context_events', 'badline')).toEqual(['at', 'label', 'body', 'props']);
  });

  it('refuses a bad line when every property already has its column (no discovery scan), and reads escaped names', async () => {
    const pipeline = await pipelineIn('steady');
    expectStatus(await ingest(server, pipeline.token, ndjson([{ label: 'seed', service: 'a', 'n"q': 1 }])), 200);
    // the same properties again: the writer skips DuckDB's property scan, so the insert itself must refuse the body
    const broken = `${JSON.stringify({ label: 'ok', service: 'b' })}\n{"label": "x", "service": }\n`;
    const refused = await ingest(server, pipeline.token, broken);
    expectError(refused, 400, 'bad_ndjson');
    expect(refused.body.error.details.line).toBe(2);
    expect(await rowCount(server, alice, 'context_events', 'steady')).toBe(1);
    // a name written with escapes is the decoded name: the existing column, or one new column
    expectStatus(await ingest(server, pipeline.token, '{"label": "esc", "serv\\u0069ce": "c", "n\\"q": 2, "t\\u00e9": 3}\n'), 200);
    expect(await columnsOf(server, alice, 'context_events', 'steady')).toEqual(['at', 'label', 'body', 'props', 'service', 'n"q', 'té']);
    const rows = await rowsOf(server, alice, 'context_events', 'steady');
    expect(rows.find((row) => row['label'] === 'esc')).toMatchObject({ service: 'c', 'n"q': '2', té: '3' });
  });

  it('names the line of a value that is not an object, of invalid UTF-8 and of a bad "at", counting empty lines', async () => {
    const pipeline = await pipelineIn('badvalues');
    const cases: [string | Buffer, number][] = [
      ['{"a":1}\n[1,2]\n{"a":3}\n', 2],
      ['{"a":1}\n\n"text"\n', 3],
      ['{"a":1}\n{"a":2} {"a":3}\n', 2],
      [Buffer.concat([Buffer.from('{"a":1}\n{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]), 2],
      ['{"a":1}\n\n\n{"at":"not a date"}\n', 4],
      ['{"at":{"nested":true}}\n', 1],
    ];
    for (const [body, line] of cases) {
      const response = await ingest(server, pipeline.token, body);
      expect(response.status, String(body)).toBe(400);
      expect(response.body.error.code).toBe('bad_ndjson');
      expect(response.body.error.details.line, String(body)).toBe(line);
    }
    expect(await rowCount(server, alice, 'context_events', 'badvalues')).toBe(0);
  });

  it('skips empty lines and refuses a body with no rows', async () => {
    const pipeline = await pipelineIn('empties');
    const response = await ingest(server, pipeline.token, fixture('ingest-empty-lines-skipped.ndjson'));
    expectStatus(response, 200).toMatchObject({ rows_in: 2, rows_out: 2 });
    for (const body of ['', '\n', '  \n\r\n\t\n']) {
      const empty = await ingest(server, pipeline.token, body);
      expect(empty.status, JSON.stringify(body)).toBe(400);
      expect(empty.body.error.code).toBe('bad_ndjson');
    }
    expect(await rowCount(server, alice, 'context_events', 'empties')).toBe(2);
  });

  it('does not create a missing table with X-Auto-Create: false, and checks the header value', async () => {
    const pipeline = await pipelineIn('nocreate', { target_table: 'context_nodes' });
    const refused = await ingest(server, pipeline.token, ndjson([{ label: 'n1' }]), { 'x-auto-create': 'false' });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: 'table_not_found', details: { table: 'context_nodes', realm: 'nocreate' } });
    const tables = await server.request('GET', '/context/tables?realm=nocreate', { token: alice.token });
    expect(tables.body.items).toEqual([]);

    const bad = await ingest(server, pipeline.token, ndjson([{ label: 'n1' }]), { 'x-auto-create': 'maybe' });
    expectError(bad, 400, 'validation_error');

    expect((await ingest(server, pipeline.token, ndjson([{ label: 'n1' }]))).status).toBe(200);
    const existing = await ingest(server, pipeline.token, ndjson([{ label: 'n2' }]), { 'x-auto-create': 'false' });
    expect(existing.status).toBe(200);
    expect(await rowCount(server, alice, 'context_nodes', 'nocreate')).toBe(2);
  });

  it('requires a valid X-Service-Signature when the pipeline says so', async () => {
    const pipeline = await pipelineIn('signed', { require_signature: true });
    const body = ndjson([{ label: 'signed event' }]);
    const missing = await ingest(server, pipeline.token, body);
    expectError(missing, 401, 'bad_signature');
    const wrong = await ingest(server, pipeline.token, body, { 'x-service-signature': signHmac('another secret', Buffer.from(body)) });
    expectError(wrong, 401, 'bad_signature');
    const tampered = await ingest(server, pipeline.token, body + '{"label":"extra"}\n', {
      'x-service-signature': signHmac(pipeline.signingSecret, Buffer.from(body)),
    });
    expect(tampered.status).toBe(401);
    const right = await ingest(server, pipeline.token, body, { 'x-service-signature': signHmac(pipeline.signingSecret, Buffer.from(body)) });
    expect(right.status).toBe(200);
    // checked before parsing: a bad body with a bad signature is a signature error
    const garbage = await ingest(server, pipeline.token, 'not json\n', { 'x-service-signature': 'sha256=' + '0'.repeat(64) });
    expectError(garbage, 401, 'bad_signature');
    expect(await rowCount(server, alice, 'context_events', 'signed')).toBe(1);
  });

  it('dedupes an Idempotency-Key retry: nothing written, the original result answered', async () => {
    const pipeline = await pipelineIn('idem');
    const body = ndjson([
      { label: 'once', n: 1 },
      { label: 'once', n: 2 },
    ]);
    const headers = { 'idempotency-key': 'batch-0001' };
    const first = await ingest(server, pipeline.token, body, headers);
    expect(first.status).toBe(200);
    const retry = await ingest(server, pipeline.token, body, headers);
    expectStatus(retry, 200).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await rowCount(server, alice, 'context_events', 'idem')).toBe(2);

    const reused = await ingest(server, pipeline.token, ndjson([{ label: 'other' }]), headers);
    expectError(reused, 409, 'idempotency_key_reused');

    // concurrent requests with one new key: one writes, the other answers its result
    const concurrent = await Promise.all([
      ingest(server, pipeline.token, body, { 'idempotency-key': 'batch-0002' }),
      ingest(server, pipeline.token, body, { 'idempotency-key': 'batch-0002' }),
    ]);
    expect(concurrent.map((response) => response.status)).toEqual([200, 200]);
    expect(concurrent[0]?.body.run_id).toBe(concurrent[1]?.body.run_id);
    expect(await rowCount(server, alice, 'context_events', 'idem')).toBe(4);

    const runs = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs`, { token: alice.token });
    expect(runs.body.items.filter((run: { status: string }) => run.status === 'succeeded').length).toBe(2);
  });

  it('records every request as a run: rows_in, rows_out, status, error; newest first, paginated', async () => {
    const pipeline = await pipelineIn('runs');
    const ok = await ingest(server, pipeline.token, ndjson([{ label: 'a' }, { label: 'b' }, { label: 'c' }]));
    const bad = await ingest(server, pipeline.token, '{"label":"a"}\n{oops\n');
    expect(bad.body.error.details.run_id).toBeGreaterThan(ok.body.run_id);
    const runs = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs`, { token: alice.token });
    expect(runs.status).toBe(200);
    expect(runs.body.total).toBe(2);
    expect(runs.body.next_cursor).toBeNull();
    expect(runs.body.items[0]).toMatchObject({
      run_id: bad.body.error.details.run_id,
      pipeline_id: pipeline.pipelineId,
      token_id: pipeline.tokenId,
      realm: 'runs',
      target_table: 'context_events',
      status: 'failed',
      rows_in: 2,
      rows_out: 0,
      error_code: 'bad_ndjson',
    });
    expect(runs.body.items[0].error).toContain('line 2');
    expect(runs.body.items[1]).toMatchObject({
      run_id: ok.body.run_id,
      status: 'succeeded',
      rows_in: 3,
      rows_out: 3,
      error: null,
      error_code: null,
    });

    const page1 = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs?limit=1`, { token: alice.token });
    expect(page1.body.items.map((run: { run_id: number }) => run.run_id)).toEqual([bad.body.error.details.run_id]);
    expect(typeof page1.body.next_cursor).toBe('string');
    const page2 = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs?limit=1&cursor=${page1.body.next_cursor}`, {
      token: alice.token,
    });
    expect(page2.body.items.map((run: { run_id: number }) => run.run_id)).toEqual([ok.body.run_id]);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('pages rows newest first and serves them as an Arrow IPC stream', async () => {
    const pipeline = await pipelineIn('reading');
    const rows = Array.from({ length: 5 }, (_, index) => ({
      at: `2025-06-0${index + 1}T00:00:00Z`,
      label: `day ${index + 1}`,
      body: `b${index}`,
      level: index % 2 === 0 ? 'info' : 'warn',
      ...(index === 4 ? { props: { extra: [1, 2] } } : {}),
    }));
    expect((await ingest(server, pipeline.token, ndjson(rows))).status).toBe(200);

    const page1 = await server.request('GET', '/context/tables/context_events/rows?realm=reading&limit=2', { token: alice.token });
    expect(page1.status).toBe(200);
    expect(page1.body.total).toBe(5);
    expect(page1.body.items.map((row: { label: string }) => row.label)).toEqual(['day 5', 'day 4']);
    expect(page1.body.items[0]).toEqual({ at: '2025-06-05T00:00:00.000Z', label: 'day 5', body: 'b4', props: { props: { extra: [1, 2] } }, level: 'info' });
    const page2 = await server.request('GET', `/context/tables/context_events/rows?realm=reading&limit=2&cursor=${page1.body.next_cursor}`, {
      token: alice.token,
    });
    expect(page2.body.items.map((row: { label: string }) => row.label)).toEqual(['day 3', 'day 2']);
    const page3 = await server.request('GET', `/context/tables/context_events/rows?realm=reading&limit=2&cursor=${page2.body.next_cursor}`, {
      token: alice.token,
    });
    expect(page3.body.items.map((row: { label: string }) => row.label)).toEqual(['day 1']);
    expect(page3.body.next_cursor).toBeNull();

    const arrow = await fetch(`${server.url}/context/tables/context_events/rows?realm=reading&limit=3`, {
      headers: { authorization: `Bearer ${alice.token}`, accept: 'application/vnd.apache.arrow.stream' },
    });
    expect(arrow.status).toBe(200);
    expect(arrow.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect(arrow.headers.get('x-total-count')).toBe('5');
    expect(typeof arrow.headers.get('x-next-cursor')).toBe('string');
    const table = tableFromIPC(new Uint8Array(await arrow.arrayBuffer()));
    expect(table.numRows).toBe(3);
    expect(table.schema.fields.map((field) => field.name)).toEqual(['at', 'label', 'body', 'props', 'level']);
    expect(table.getChild('label')?.toArray()).toEqual(['day 5', 'day 4', 'day 3']);
    expect(table.getChild('at')?.get(0)).toBe(Date.parse('2025-06-05T00:00:00Z'));
    expect(JSON.parse(String(table.getChild('props')?.get(0)))).toEqual({ props: { extra: [1, 2] } });
    expect(table.getChild('props')?.get(1)).toBeNull();
  });

  it('answers table_not_found for a table never written and validates cursors', async () => {
    const missing = await server.request('GET', '/context/tables/context_nodes/rows?realm=default', { token: alice.token });
    expectError(missing, 404, 'table_not_found');
    const pipeline = await pipelineIn('cursors');
    await ingest(server, pipeline.token, ndjson([{ label: 'x' }]));
    const badCursor = await server.request('GET', '/context/tables/context_events/rows?realm=cursors&cursor=bm9wZQ', { token: alice.token });
    expectError(badCursor, 400, 'invalid_cursor');
  });

  it("keeps one organization's tables unreachable from another", async () => {
    const bob = await server.register('Bob Ltd');
    const pipeline = await pipelineIn('secret-realm');
    await ingest(server, pipeline.token, ndjson([{ label: 'alice only', secret: 'x' }]));
    const bobTables = await server.request('GET', '/context/tables', { token: bob.token });
    expect(bobTables.status).toBe(200);
    expect(bobTables.body.items).toEqual([]);
    const bobRows = await server.request('GET', '/context/tables/context_events/rows?realm=secret-realm', { token: bob.token });
    expectError(bobRows, 404, 'table_not_found');
  });

  it('reports the engine in /health', async () => {
    const health = await server.request('GET', '/health');
    expect(health.body.dependencies.context_tables).toBe('ok');
    expect(health.body.engines.context_tables).toBe('duckdb');
  });
});
