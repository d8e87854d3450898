/**
 * Routes of a subsystem whose feature flag is off answer 404 `feature_disabled`
 * naming the flag (issue 15), for every method and path under its prefix.
 */
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { startTestServer } from '../helpers/server.js';

const GATED: [string, string, string][] = [
  ['GET', '/policies', 'policies'],
  ['POST', '/policies/policies/validate', 'policies'],
  ['DELETE', '/policies/sources/ps_1', 'policies'],
  ['POST', '/rag/search', 'rag'],
  ['GET', '/rag/collections', 'rag'],
  ['GET', '/workers/status', 'workers'],
  ['GET', '/orchestrator/workflows', 'orchestrator'],
  ['POST', '/orchestrator/workflows/wf_1/run', 'orchestrator'],
  ['POST', '/voice/sessions', 'voice'],
];

describe('feature-gated subsystems', () => {
  const ctx = useSuite(async (own) => {
    const off = own(await startTestServer());
    const on = own(await startTestServer({ SERVICE_FEATURES_RAG: 'true', SERVICE_FEATURES_VOICE: 'true' }));
    return { off, on, owner: await off.register('Features Org') };
  });

  it.each(GATED)('%s %s answers 404 feature_disabled naming %s while the flag is off', async (method, path, feature) => {
    for (const token of [ctx.owner.token, undefined]) {
      const response = await ctx.off.request(method, path, { ...(token ? { token } : {}), ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) });
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({
        code: 'feature_disabled',
        details: { feature, enable_with: `SERVICE_FEATURES_${feature.toUpperCase()}=true` },
      });
      expect(response.body.error.message).toContain(feature);
    }
  });

  it('keeps not_found for paths outside any feature, and for look-alike prefixes', async () => {
    for (const path of ['/nope', '/ragged', '/policiesx', '/voices']) {
      const response = await ctx.off.request('GET', path, { token: ctx.owner.token });
      expect(response.status, path).toBe(404);
      expect(response.body.error.code, path).toBe('not_found');
    }
  });

  it('a feature switched on is no longer reported as disabled; the others still are', async () => {
    const session = await ctx.on.register('Features On');
    const voice = await ctx.on.request('GET', '/voice/sessions/unknown', { token: session.token });
    expect(voice.body.error.code).not.toBe('feature_disabled');
    const policies = await ctx.on.request('GET', '/policies', { token: session.token });
    expect(policies.body.error).toMatchObject({ code: 'feature_disabled', details: { feature: 'policies' } });
  });
});
