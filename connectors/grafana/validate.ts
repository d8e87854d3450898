/**
 * Validation of a grafana source: the token authenticates (`/api/user`), and
 * its role in the current organization (`/api/user/orgs`) is at least Viewer.
 */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import type { HttpClient } from '../shared/http-client.js';
import { grafanaClient, ROLES } from './client.js';

interface GrafanaUser {
  readonly login: string;
  readonly orgId: number;
  readonly isGrafanaAdmin?: boolean;
}

interface UserOrg {
  readonly orgId: number;
  readonly name: string;
  readonly role: string;
}

/**
 * Tokens tied to an organization rather than a user (API keys, some service
 * accounts) get 404 "User not found" from /api/user: reading one search hit
 * (dashboards:read, which Viewer grants) is then the evidence of the role.
 */
async function validateWithoutUser(client: HttpClient, signal: AbortSignal): Promise<ValidationResult> {
  try {
    await client.json<unknown[]>({ path: '/api/search', query: { limit: 1 }, signal });
    return { ok: true, details: { login: null, role: 'Viewer or above', note: 'the token is not tied to a user; its role was checked by reading dashboards' } };
  } catch (error) {
    if (!ToolError.is(error) || error.code !== 'forbidden') throw error;
    return {
      ok: false,
      message: 'the token may not read dashboards: it needs at least the Viewer role',
      details: { reason: 'insufficient_role', required_role: 'Viewer', missing_permission: 'dashboards:read' },
    };
  }
}

export async function validateGrafana(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  const client = grafanaClient(config, net);
  try {
    const user = await client
      .json<GrafanaUser>({ path: '/api/user', signal })
      .then((answer) => answer.data)
      .catch((error: unknown) => {
        if (ToolError.is(error) && error.code === 'not_found') return null;
        throw error;
      });
    if (user === null) return await validateWithoutUser(client, signal);
    const { data: orgs } = await client.json<unknown>({ path: '/api/user/orgs', signal });
    // typed at the boundary: an answer of another shape (a proxy's page, an old Grafana) is a refusal that says so
    if (!Array.isArray(orgs) || typeof user.orgId !== 'number') {
      throw new ToolError('upstream_error', 'Grafana answered /api/user or /api/user/orgs with an unexpected shape (is base_url a Grafana?)');
    }
    const org = (orgs as UserOrg[]).find((candidate) => candidate.orgId === user.orgId);
    const role = org?.role ?? 'None';
    if (ROLES.indexOf(role as (typeof ROLES)[number]) < ROLES.indexOf('Viewer')) {
      return {
        ok: false,
        message: `the token's role in the organization is ${role}; the connector needs at least Viewer`,
        details: { reason: 'insufficient_role', role, required_role: 'Viewer', org_id: user.orgId },
      };
    }
    return { ok: true, details: { login: user.login, role, org_id: user.orgId, org_name: org?.name ?? null } };
  } catch (error) {
    if (!ToolError.is(error)) throw error;
    const messages: Record<string, string> = {
      unauthorized: 'Grafana refused the token (401): it is invalid, expired or revoked',
      forbidden: 'Grafana denied the token access to its own user (403)',
      upstream_unreachable: error.message,
    };
    return { ok: false, message: messages[error.code] ?? error.message, details: { reason: error.code, ...error.details } };
  }
}
