/**
 * github validate(): the credentials work (GET /user for a token, GET /app and
 * an installation token for an App), a classic token has the scopes the tools
 * need (`X-OAuth-Scopes`), and the configured orgs and repositories are reachable.
 */
import type { Octokit } from '@octokit/rest';
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { appOctokit, githubClient, githubFailure } from './client.js';
import { githubConfigOf, type GithubConfig } from './config.js';

/** A granted scope also grants these (GitHub's scope hierarchy, for the scopes we require). */
const IMPLIED: Readonly<Record<string, readonly string[]>> = {
  repo: ['repo'],
  'admin:org': ['admin:org', 'write:org', 'read:org'],
  'write:org': ['write:org', 'read:org'],
  'read:org': ['read:org'],
};

/** `repo` for private repositories, pull requests, commits, issues and Actions runs; `read:org` to list an org's repositories. */
function requiredScopes(config: GithubConfig): string[] {
  return config.orgs.length > 0 ? ['repo', 'read:org'] : ['repo'];
}

/** The required scopes a classic token's `X-OAuth-Scopes` header lacks (fine-grained tokens send no header: nothing to check). */
export function missingScopes(header: string | undefined, required: readonly string[]): string[] {
  if (header === undefined) return [];
  const granted = new Set(
    header
      .split(',')
      .map((scope) => scope.trim())
      .filter(Boolean)
      .flatMap((scope) => IMPLIED[scope] ?? [scope]),
  );
  return required.filter((scope) => !granted.has(scope));
}

const refused = (message: string, details: Record<string, unknown>): ValidationResult => ({ ok: false, message, details });

/** A failed call as a refusal that names the reason. */
function failed(error: unknown, signal: AbortSignal, reasonFor401: string): ValidationResult {
  const mapped = githubFailure(error, signal);
  if (!ToolError.is(mapped)) throw mapped;
  const reason = mapped.code === 'unauthorized' ? reasonFor401 : mapped.code;
  return refused(mapped.message, { reason, ...mapped.details });
}

async function checkToken(config: GithubConfig, signal: AbortSignal, net: NetPort | undefined): Promise<ValidationResult | Octokit> {
  if (config.auth.kind === 'app') throw new Error('not a token config');
  if (config.auth.token === '') return refused('the token is missing', { reason: 'missing_fields', missing_fields: ['auth.token'] });
  const octokit = await githubClient(config, signal, net);
  try {
    const answer = await octokit.rest.users.getAuthenticated({ request: { signal } });
    const header = answer.headers['x-oauth-scopes'];
    const missing = missingScopes(header, requiredScopes(config));
    if (missing.length > 0) {
      return refused(`the token lacks the scopes ${missing.join(', ')}`, {
        reason: 'missing_scopes',
        missing_scopes: missing,
        granted_scopes: (header ?? '')
          .split(',')
          .map((scope) => scope.trim())
          .filter(Boolean),
      });
    }
    return octokit;
  } catch (error) {
    return failed(error, signal, 'bad_credentials');
  }
}

async function checkApp(config: GithubConfig, signal: AbortSignal, net: NetPort | undefined): Promise<ValidationResult | Octokit> {
  if (config.auth.kind !== 'app') throw new Error('not an app config');
  const missing = (['app_id', 'private_key', 'installation_id'] as const).filter((field) => config.auth.kind === 'app' && config.auth[field] === '');
  if (missing.length > 0)
    return refused('the GitHub App config is incomplete', { reason: 'missing_fields', missing_fields: missing.map((field) => `auth.${field}`) });
  try {
    const app = await appOctokit(config, net);
    await app.rest.apps.getAuthenticated({ request: { signal } });
  } catch (error) {
    return failed(error, signal, 'app_credentials_rejected');
  }
  try {
    return await githubClient(config, signal, net);
  } catch (error) {
    if (ToolError.is(error) && error.code === 'not_found') {
      return refused(`the App has no installation ${config.auth.installation_id}`, {
        reason: 'installation_not_found',
        installation_id: config.auth.installation_id,
      });
    }
    return failed(error, signal, 'app_credentials_rejected');
  }
}

/** Configured orgs and repositories the credentials cannot see. */
async function unreachable(octokit: Octokit, config: GithubConfig, signal: AbortSignal): Promise<ValidationResult | null> {
  const orgs: string[] = [];
  const repositories: string[] = [];
  for (const org of config.orgs) {
    try {
      await octokit.rest.orgs.get({ org, request: { signal } });
    } catch (error) {
      const mapped = githubFailure(error, signal);
      if (ToolError.is(mapped) && mapped.code === 'not_found') orgs.push(org);
      else return failed(error, signal, 'bad_credentials');
    }
  }
  for (const full of config.repositories) {
    const [owner = '', repo = ''] = full.split('/');
    try {
      await octokit.rest.repos.get({ owner, repo, request: { signal } });
    } catch (error) {
      const mapped = githubFailure(error, signal);
      if (ToolError.is(mapped) && mapped.code === 'not_found') repositories.push(full);
      else return failed(error, signal, 'bad_credentials');
    }
  }
  if (orgs.length === 0 && repositories.length === 0) return null;
  return refused('the credentials cannot see some configured organizations or repositories', {
    reason: 'inaccessible',
    ...(orgs.length > 0 ? { inaccessible_orgs: orgs } : {}),
    ...(repositories.length > 0 ? { inaccessible_repositories: repositories } : {}),
  });
}

export async function validateGithub(raw: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  signal.throwIfAborted();
  const config = githubConfigOf(raw);
  const checked = config.auth.kind === 'app' ? await checkApp(config, signal, net) : await checkToken(config, signal, net);
  if ('ok' in checked) return checked;
  return (await unreachable(checked, config, signal)) ?? { ok: true };
}
