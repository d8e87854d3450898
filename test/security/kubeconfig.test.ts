/**
 * A tenant's kubeconfig never makes this server run a command or read one of
 * its files: exec and auth-provider plugins and every `*-file` credential are
 * refused when the source is validated or used, and nothing runs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownOrgs, ownTempDir, useSuite } from '../helpers/suite.js';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer } from '../fakes/kubernetes/server.js';
import { oneOrg } from '../helpers/orgs.js';
import { startTestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

describe('kubeconfig credentials that reach the host', () => {
  const ctx = useSuite(async (own) => ({
    fake: own(await startFakeKubeServer(sampleCluster())),
    ...ownOrgs(own, await oneOrg({}, { name: 'Kube Org' })),
    work: ownTempDir(own, 'kubeconfig-'),
  }));

  /** the fake's own kubeconfig with the user (or cluster) entry changed */
  const withUser = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string => {
    const doc = JSON.parse(ctx.fake.kubeconfig()) as { users: { user: Record<string, unknown> }[]; clusters: { cluster: Record<string, unknown> }[] };
    doc.users[0]!.user = user;
    Object.assign(doc.clusters[0]!.cluster, cluster);
    return JSON.stringify(doc);
  };

  it('refuses exec, auth-provider and file credentials, and runs nothing', async () => {
    const marker = join(ctx.work, 'ran');
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: '/bin/sh',
      args: ['-c', `touch ${marker}; echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`],
    };
    const cases: [string, string][] = [
      ['exec', withUser({ exec })],
      ['auth-provider', withUser({ 'auth-provider': { name: 'oidc', config: { 'id-token': 'x', 'idp-issuer-url': 'https://example.invalid' } } })],
      ['client-certificate', withUser({ 'client-certificate': '/etc/hostname', 'client-key': '/etc/hostname' })],
      ['client-key', withUser({ 'client-certificate-data': 'eA==', 'client-key': '/etc/hostname' })],
      ['certificate-authority', withUser({ token: 'good' }, { 'certificate-authority': '/etc/hostname', 'insecure-skip-tls-verify': false })],
    ];
    for (const [what, kubeconfig] of cases) {
      const created = await ctx.server.request('POST', '/sources', {
        token: ctx.owner.token,
        body: { name: `k8s ${what}`, connector: 'kubernetes', config: { auth: { kind: 'kubeconfig', kubeconfig } } },
      });
      expect(created.status, created.text).toBe(201);
      const tested = await ctx.server.request('GET', `/sources/${created.body.id as string}/test`, { token: ctx.owner.token });
      expect(tested.status, `${what}: ${tested.text}`).toBe(422);
      expect(tested.body.error.details, what).toMatchObject({ reason: 'invalid_config', field: 'auth.kubeconfig' });
      expect(tested.body.error.message, what).toContain('on this server');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('still accepts inline credentials', async () => {
    const created = await ctx.server.request('POST', '/sources', {
      token: ctx.owner.token,
      body: { name: 'k8s inline', connector: 'kubernetes', config: { auth: { kind: 'kubeconfig', kubeconfig: ctx.fake.kubeconfig() } } },
    });
    expect(created.status, created.text).toBe(201);
    const tested = await ctx.server.request('GET', `/sources/${created.body.id as string}/test`, { token: ctx.owner.token });
    expect(tested.status, tested.text).toBe(200);
  });

  it("offers in_cluster (this service's own service account) only where the operator allows it", async () => {
    const refused = await ctx.server.request('POST', '/sources', {
      token: ctx.owner.token,
      body: { name: 'k8s pod', connector: 'kubernetes', config: { auth: { kind: 'in_cluster' } } },
    });
    expectError(refused, 400, 'validation_error');
    expect(JSON.stringify(refused.body.error.details)).toContain('config.auth.kind');
    const allowing = await startTestServer({ KUBERNETES_IN_CLUSTER: 'true' });
    try {
      const session = await allowing.register('Kube In Cluster');
      const created = await allowing.request('POST', '/sources', {
        token: session.token,
        body: { name: 'k8s pod', connector: 'kubernetes', config: { auth: { kind: 'in_cluster' } } },
      });
      expect(created.status, created.text).toBe(201);
    } finally {
      await allowing.stop();
    }
  });
});
