/**
 * A tenant's kubeconfig never makes this server run a command or read one of
 * its files: exec and auth-provider plugins and every `*-file` credential are
 * refused when the source is validated or used, and nothing runs.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer, type FakeKubeServer } from '../fakes/kubernetes/server.js';
import { oneOrg } from '../helpers/orgs.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';

describe('kubeconfig credentials that reach the host', () => {
  let server: TestServer;
  let fake: FakeKubeServer;
  let owner: Session;
  let work: string;

  beforeAll(async () => {
    fake = await startFakeKubeServer(sampleCluster());
    ({ server, owner } = await oneOrg({}, { name: 'Kube Org' }));
    work = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  });
  afterAll(async () => {
    await server.stop();
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** the fake's own kubeconfig with the user (or cluster) entry changed */
  const withUser = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string => {
    const doc = JSON.parse(fake.kubeconfig()) as { users: { user: Record<string, unknown> }[]; clusters: { cluster: Record<string, unknown> }[] };
    doc.users[0]!.user = user;
    Object.assign(doc.clusters[0]!.cluster, cluster);
    return JSON.stringify(doc);
  };

  it('refuses exec, auth-provider and file credentials, and runs nothing', async () => {
    const marker = join(work, 'ran');
    const exec = { apiVersion: 'client.authentication.k8s.io/v1beta1', command: '/bin/sh', args: ['-c', `touch ${marker}; echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`] };
    const cases: [string, string][] = [
      ['exec', withUser({ exec })],
      ['auth-provider', withUser({ 'auth-provider': { name: 'oidc', config: { 'id-token': 'x', 'idp-issuer-url': 'https://example.invalid' } } })],
      ['client-certificate', withUser({ 'client-certificate': '/etc/hostname', 'client-key': '/etc/hostname' })],
      ['client-key', withUser({ 'client-certificate-data': 'eA==', 'client-key': '/etc/hostname' })],
      ['certificate-authority', withUser({ token: 'good' }, { 'certificate-authority': '/etc/hostname', 'insecure-skip-tls-verify': false })],
    ];
    for (const [what, kubeconfig] of cases) {
      const created = await server.request('POST', '/sources', { token: owner.token, body: { name: `k8s ${what}`, connector: 'kubernetes', config: { auth: { kind: 'kubeconfig', kubeconfig } } } });
      expect(created.status, created.text).toBe(201);
      const tested = await server.request('GET', `/sources/${created.body.id as string}/test`, { token: owner.token });
      expect(tested.status, `${what}: ${tested.text}`).toBe(422);
      expect(tested.body.error.details, what).toMatchObject({ reason: 'invalid_config', field: 'auth.kubeconfig' });
      expect(tested.body.error.message, what).toContain('on this server');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('still accepts inline credentials', async () => {
    const created = await server.request('POST', '/sources', { token: owner.token, body: { name: 'k8s inline', connector: 'kubernetes', config: { auth: { kind: 'kubeconfig', kubeconfig: fake.kubeconfig() } } } });
    expect(created.status, created.text).toBe(201);
    const tested = await server.request('GET', `/sources/${created.body.id as string}/test`, { token: owner.token });
    expect(tested.status, tested.text).toBe(200);
  });

  it('offers in_cluster (this service\'s own service account) only where the operator allows it', async () => {
    const refused = await server.request('POST', '/sources', { token: owner.token, body: { name: 'k8s pod', connector: 'kubernetes', config: { auth: { kind: 'in_cluster' } } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_error');
    expect(JSON.stringify(refused.body.error.details)).toContain('config.auth.kind');
    const allowing = await startTestServer({ KUBERNETES_IN_CLUSTER: 'true' });
    try {
      const session = await allowing.register('Kube In Cluster');
      const created = await allowing.request('POST', '/sources', { token: session.token, body: { name: 'k8s pod', connector: 'kubernetes', config: { auth: { kind: 'in_cluster' } } } });
      expect(created.status, created.text).toBe(201);
    } finally {
      await allowing.stop();
    }
  });
});
