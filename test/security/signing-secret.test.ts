/**
 * Ingest signing secrets are sealed at rest: the metadata files never hold
 * them in plaintext, signing works across restarts, and a record written in
 * plaintext before sealing is sealed at the next start and keeps working.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import type { OrgId } from '../../runtime/store/types.js';
import { oneOrg } from '../helpers/orgs.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { ingest, ndjson } from '../ingest/helpers.js';
import { expectError } from '../helpers/expect-status.js';

const databaseBytes = (dataDir: string): Buffer =>
  Buffer.concat(
    ['metadata.db', 'metadata.db-wal']
      .map((name) => join(dataDir, name))
      .filter(existsSync)
      .map((file) => readFileSync(file)),
  );

describe('ingest signing secrets at rest', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-signing-test-'));
  const env = { JWT_SECRET: randomBytes(32).toString('hex') };
  let server: TestServer;
  let owner: Session;
  let pipelineId: string;
  let token: string;
  let generatedToken: string;
  const secret = `own-signing-secret-${randomBytes(8).toString('hex')}`;
  const body = ndjson([{ label: 'signed' }]);

  afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const signedIngest = (withSecret: string, ingestToken = token) =>
    ingest(server, ingestToken, body, { 'x-service-signature': signHmac(withSecret, Buffer.from(body)) });

  it('a created secret is answered once and never written in plaintext; signing works', async () => {
    ({ server, owner } = await oneOrg(env, { dataDir }));
    const created = await server.request('POST', '/context/pipelines', {
      token: owner.token,
      body: { name: 'signed', kind: 'webhook', target_table: 'context_events', require_signature: true },
    });
    pipelineId = created.body.id;
    const issued = await server.request('POST', `/context/pipelines/${pipelineId}/tokens`, { token: owner.token, body: { signing_secret: secret } });
    expect(issued.status).toBe(201);
    expect(issued.body.signing_secret).toBe(secret);
    token = issued.body.token;
    const generated = await server.request('POST', `/context/pipelines/${pipelineId}/tokens`, { token: owner.token, body: {} });
    expect(generated.status).toBe(201);
    generatedToken = generated.body.token as string;

    expect((await signedIngest(secret)).status).toBe(200);
    expect((await signedIngest(generated.body.signing_secret as string, generated.body.token as string)).status).toBe(200);
    expect((await signedIngest('not-the-secret-at-all')).status).toBe(401);
    const listed = await server.request('GET', `/context/pipelines/${pipelineId}/tokens`, { token: owner.token });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    const bytes = databaseBytes(dataDir);
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(generated.body.signing_secret as string)).toBe(false);
  });

  it('signing still works after a restart, and the files still hold no plaintext', async () => {
    await server.stop();
    expect(databaseBytes(dataDir).includes(secret)).toBe(false);
    server = await startTestServer(env, { dataDir });
    expect((await signedIngest(secret)).status).toBe(200);
    expect((await signedIngest('not-the-secret-at-all')).status).toBe(401);
  });

  it('a sealed secret copied to another token record does not open for it (bound to its token)', async () => {
    const { ingestTokens } = server.service.services.collections;
    const org = owner.organization.id as OrgId;
    const records = await ingestTokens.list(org, { limit: 10, filter: { pipeline_id: pipelineId } });
    const [first, second] = records.items;
    expect(first?.signing_secret_sealed).toMatch(/^v1\./);
    expect(second?.signing_secret_sealed).toMatch(/^v1\./);
    await ingestTokens.update(org, second?.id as string, { signing_secret_sealed: first?.signing_secret_sealed });
    const refused = await signedIngest(secret, generatedToken);
    expectError(refused, 401, 'bad_signature');
    // the first token's own record still opens
    expect((await signedIngest(secret)).status).toBe(200);
  });

  it('a record stored in plaintext before sealing keeps working, and is sealed at the next start', async () => {
    const legacySecret = `legacy-plaintext-secret-${randomBytes(8).toString('hex')}`;
    const { ingestTokens } = server.service.services.collections;
    const org = owner.organization.id as OrgId;
    const fresh = await server.request('POST', `/context/pipelines/${pipelineId}/tokens`, { token: owner.token, body: {} });
    const legacyToken = fresh.body.token as string;
    // what a record of the earlier release looks like: the secret in plaintext, nothing sealed
    await ingestTokens.update(org, fresh.body.id as string, { signing_secret: legacySecret, signing_secret_sealed: undefined });
    expect((await signedIngest(legacySecret, legacyToken)).status).toBe(200);

    await server.stop();
    server = await startTestServer(env, { dataDir });
    const migrated = await server.service.services.collections.ingestTokens.get(org, fresh.body.id as string);
    expect(migrated?.signing_secret).toBeUndefined();
    expect(migrated?.signing_secret_sealed).toMatch(/^v1\./);
    expect((await signedIngest(legacySecret, legacyToken)).status).toBe(200);
    expect((await signedIngest(secret)).status).toBe(200);
    await server.stop();
    expect(databaseBytes(dataDir).includes(legacySecret)).toBe(false);
    server = await startTestServer(env, { dataDir });
    expect((await signedIngest(legacySecret, legacyToken)).status).toBe(200);
  });
});
