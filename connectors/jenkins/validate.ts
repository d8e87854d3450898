/**
 * jenkins validate(): the API token authenticates as the configured user
 * (GET /me/api/json) and may read the instance (GET /api/json, Overall/Read).
 */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { jenkinsClient, jenkinsConfigOf } from './config.js';

const refused = (message: string, details: Record<string, unknown>): ValidationResult => ({ ok: false, message, details });

export async function validateJenkins(raw: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  signal.throwIfAborted();
  const config = jenkinsConfigOf(raw);
  const missing = [...(config.url === '' ? ['url'] : []), ...(config.username === '' ? ['username'] : []), ...(config.apiToken === '' ? ['api_token'] : [])];
  if (missing.length > 0) return refused('the Jenkins config is incomplete', { reason: 'missing_fields', missing_fields: missing });
  const client = jenkinsClient(config, net);
  try {
    const me = await client.json<{ id?: string }>({ path: '/me/api/json', query: { tree: 'id,fullName' }, signal });
    // an instance that lets anonymous users read answers 200 as `anonymous` when the token is ignored
    if (me.data?.id === undefined || me.data.id === 'anonymous') {
      return refused('Jenkins did not accept the credentials (it answered as anonymous)', { reason: 'bad_credentials', authenticated_as: me.data?.id ?? null });
    }
    if (me.data.id.toLowerCase() !== config.username.toLowerCase()) {
      return refused(`the API token belongs to ${me.data.id}, not ${config.username}`, { reason: 'username_mismatch', authenticated_as: me.data.id });
    }
    const root = await client.json<{ _class?: string }>({ path: '/api/json', query: { tree: 'mode,nodeDescription' }, signal });
    return { ok: true, details: { user: me.data.id, version: root.headers.get('x-jenkins') } };
  } catch (error) {
    signal.throwIfAborted();
    if (!ToolError.is(error)) throw error;
    if (error.code === 'unauthorized') return refused('Jenkins refused the username or API token (401)', { reason: 'bad_credentials', status: 401 });
    if (error.code === 'forbidden')
      return refused('the user lacks the Overall/Read permission', { reason: 'missing_permissions', missing_permissions: ['Overall/Read'], status: 403 });
    if (error.code === 'not_found') return refused(`no Jenkins answers at ${config.baseUrl} (404 for /me/api/json)`, { reason: 'not_jenkins', status: 404 });
    return refused(error.message, { reason: error.code, ...error.details });
  }
}
