/**
 * What the audit log says a request did, read from the live route table: each
 * mutating route names a resource kind and an action, nested routes their
 * parent, and the POSTs that only read are left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditTarget } from '../../gateway/audit.js';
import type { AnyRoute } from '../../gateway/route.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('audit targets of the route table', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SERVICE_FEATURES_POLICIES: 'true' });
  });
  afterAll(async () => {
    await server.stop();
  });

  const routeOf = (method: string, path: string): AnyRoute => {
    const found = server.service.routes.find((candidate) => candidate.method === method && candidate.path === path);
    if (!found) throw new Error(`no route ${method} ${path}`);
    return found;
  };
  const target = (method: string, path: string, params: Record<string, string> = {}, json: unknown = undefined) =>
    auditTarget(routeOf(method, path), params, json);

  it('derives kind, action and id from the pattern', () => {
    expect(target('POST', '/realms', {}, { id: 'rlm_1' })).toEqual({ action: 'create', resource: { kind: 'realm', id: 'rlm_1' }, parent: null });
    expect(target('PATCH', '/api-keys/:id', { id: 'key_1' }).resource).toEqual({ kind: 'api_key', id: 'key_1' });
    expect(target('POST', '/api-keys/:id/rotate', { id: 'key_1' })).toMatchObject({ action: 'rotate', resource: { kind: 'api_key', id: 'key_1' } });
    expect(target('POST', '/tasks/:id/rotate-secret', { id: 'tsk_1' })).toMatchObject({ action: 'rotate_secret', resource: { kind: 'task' } });
    expect(target('DELETE', '/policies/:id', { id: 'pol_1' })).toMatchObject({ action: 'delete', resource: { kind: 'policy', id: 'pol_1' } });
    expect(target('PATCH', '/settings').resource).toEqual({ kind: 'settings', id: null });
    expect(target('POST', '/chat/conversations', {}, { id: 'cnv_1' }).resource).toEqual({ kind: 'chat_conversation', id: 'cnv_1' });
    expect(target('POST', '/context/pipelines/:id/tokens', { id: 'cpl_1' }, { id: 'itk_1' })).toEqual({
      action: 'create',
      resource: { kind: 'token', id: 'itk_1' },
      parent: { kind: 'context_pipeline', id: 'cpl_1' },
    });
    // declared where the pattern does not say it
    expect(target('POST', '/chat/conversations/:id/approvals/:approval_id', { id: 'cnv_1', approval_id: 'apr_1' })).toMatchObject({
      action: 'decide',
      resource: { kind: 'approval', id: 'apr_1' },
    });
  });

  it('every audited route names a kind and an action; read-only POSTs and protocol endpoints are not audited', () => {
    const mutating = server.service.routes.filter((candidate) => candidate.method !== 'GET' && candidate.auth === 'bearer');
    expect(mutating.length).toBeGreaterThan(60);
    for (const candidate of mutating) {
      const { action, resource } = auditTarget(candidate, {}, undefined);
      expect(resource.kind, `${candidate.method} ${candidate.path}`).toMatch(/^[a-z][a-z_]*$/);
      expect(action, `${candidate.method} ${candidate.path}`).toMatch(/^[a-z][a-z_]*$/);
    }
    for (const [method, path] of [
      ['POST', '/mcp'],
      ['POST', '/pipeline-agent/log'],
      ['POST', '/notifications/read-all'],
    ]) {
      expect(routeOf(method as string, path as string).audit).toBe(false);
    }
    for (const path of ['/memory/recall', '/policies/eval', '/policies/policies/validate']) {
      const read = routeOf('POST', path);
      expect(read.auth === 'bearer' && read.permission?.endsWith(':read')).toBe(true);
    }
  });
});
