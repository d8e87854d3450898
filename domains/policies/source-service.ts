/**
 * Policy sources (feature `policies`): a git repository synced on demand, or
 * modules given inline (compiled at save). An enabled source's modules join the
 * organization's bundle; a policy's rego_file may name one as `<source name>/<path>`.
 */
import type { Collections } from '../collections.js';
import type { PolicyBundles } from './bundles.js';
import { checkBranch, normalizeGitPath, parseGitUrl } from './git-url.js';
import { MASKED_SSH_KEY, type PolicySourceKeys } from './source-secrets.js';
import type { PolicySourceSync } from './source-sync.js';
import type { PolicySourceDoc, PolicySourceModule } from './types.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { assertEgressAllowed, type EgressGuard } from '../../runtime/net/egress.js';
import { RegoError, validate } from '../../runtime/policy/index.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface PolicySourceCreate {
  readonly name: string;
  readonly source_type: 'git_repo' | 'inline';
  readonly git_url?: string | undefined;
  readonly git_branch: string;
  readonly git_path: string;
  readonly git_ssh_key?: string | undefined;
  readonly modules?: PolicySourceModule[] | undefined;
  readonly enabled: boolean;
}

export interface PolicySourcePatch {
  readonly name?: string | undefined;
  readonly source_type?: string | undefined;
  readonly git_url?: string | undefined;
  readonly git_branch?: string | undefined;
  readonly git_path?: string | undefined;
  /** a new key, null to remove it, or the mask to keep it */
  readonly git_ssh_key?: string | null | undefined;
  readonly modules?: PolicySourceModule[] | undefined;
  readonly enabled?: boolean | undefined;
}

export interface PolicySourceDeps {
  readonly collections: Pick<Collections, 'policySources' | 'policies'>;
  readonly bundles: PolicyBundles;
  readonly sync: PolicySourceSync;
  readonly keys: PolicySourceKeys;
  readonly egress: EgressGuard;
  /** POLICY_GIT_ALLOW_LOCAL: file:// URLs and absolute paths */
  readonly allowLocal: boolean;
}

const mismatch = (field: string, type: string): never => {
  throw new ServiceError('validation_error', `${field} does not apply to a source of type ${type}`, { field });
};

export class PolicySourceService {
  constructor(private readonly deps: PolicySourceDeps) {}

  /** the sources as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['policySources'], 'list' | 'revision'> {
    return this.deps.collections.policySources;
  }

  async create(org: OrgId, createdBy: string, body: PolicySourceCreate): Promise<PolicySourceDoc> {
    const { collections, bundles, keys } = this.deps;
    const id = newId('psr');
    const git = body.source_type === 'git_repo';
    if (git) {
      if (body.git_url === undefined) throw new ServiceError('validation_error', 'git_url is required for a git_repo source', { field: 'git_url' });
      if (body.modules !== undefined) mismatch('modules', body.source_type);
      this.checkUrl(body.git_url);
    } else {
      for (const field of ['git_url', 'git_ssh_key'] as const) if (body[field] !== undefined) mismatch(field, body.source_type);
      if (body.modules === undefined) throw new ServiceError('validation_error', 'modules are required for an inline source', { field: 'modules' });
      await this.checkModules(org, id, body.name, body.modules);
    }
    const source = await unique('policy source', () =>
      collections.policySources.insert(org, {
        id,
        name: body.name,
        source_type: body.source_type,
        git_url: git ? (body.git_url ?? null) : null,
        git_branch: checkBranch(body.git_branch),
        git_path: normalizeGitPath(body.git_path),
        git_ssh_key_sealed: git && body.git_ssh_key !== undefined ? keys.seal(org, id, body.git_ssh_key) : null,
        modules: git ? [] : (body.modules ?? []),
        enabled: body.enabled,
        last_sync_status: 'never',
        last_sync_error: null,
        last_synced_at: null,
        commit: null,
        created_by: createdBy,
      }),
    );
    if (!git) bundles.invalidate(org);
    return source;
  }

  get(org: OrgId, id: string): Promise<PolicySourceDoc> {
    return getOr404(this.deps.collections.policySources, org, id, 'policy source');
  }

  /** name and source_type are fixed; git changes take effect at the next sync */
  async update(org: OrgId, id: string, body: PolicySourcePatch): Promise<PolicySourceDoc> {
    const { collections, bundles, keys } = this.deps;
    const source = await this.get(org, id);
    rejectImmutable(source, body, ['source_type', 'name']);
    const git = source.source_type === 'git_repo';
    const changes: { -readonly [K in keyof PolicySourceDoc]?: PolicySourceDoc[K] } = {};
    if (git) {
      if (body.modules !== undefined) mismatch('modules', source.source_type);
      if (body.git_url !== undefined) {
        this.checkUrl(body.git_url);
        changes.git_url = body.git_url;
      }
      if (body.git_branch !== undefined) changes.git_branch = checkBranch(body.git_branch);
      if (body.git_path !== undefined) changes.git_path = normalizeGitPath(body.git_path);
      if (body.git_ssh_key === null) changes.git_ssh_key_sealed = null;
      else if (body.git_ssh_key !== undefined && body.git_ssh_key !== MASKED_SSH_KEY) changes.git_ssh_key_sealed = keys.seal(org, source.id, body.git_ssh_key);
    } else {
      for (const field of ['git_url', 'git_branch', 'git_path', 'git_ssh_key'] as const) if (body[field] !== undefined) mismatch(field, source.source_type);
      if (body.modules !== undefined) {
        await this.checkModules(org, source.id, source.name, body.modules);
        changes.modules = body.modules;
      }
    }
    if (body.enabled !== undefined) changes.enabled = body.enabled;
    const updated = await collections.policySources.update(org, source.id, changes);
    if (!updated) throw new ServiceError('not_found', `policy source ${id} not found`);
    bundles.invalidate(org);
    return updated;
  }

  /** refused while a policy's rego_file names one of its modules */
  async delete(org: OrgId, id: string): Promise<void> {
    const { collections, bundles, sync } = this.deps;
    const source = await this.get(org, id);
    const users = (await collections.policies.findAll(org)).filter((policy) => policy.rego_file?.startsWith(`${source.name}/`) === true);
    if (users.length > 0) {
      throw new ServiceError('conflict', `policies ${users.map((policy) => policy.name).join(', ')} read their rego_file from this source`, {
        policies: users.map((policy) => policy.id),
      });
    }
    await collections.policySources.delete(org, source.id);
    await sync.remove(org, source.id);
    bundles.invalidate(org);
  }

  /** a git source only */
  async sync(org: OrgId, id: string): Promise<PolicySourceDoc> {
    const source = await this.get(org, id);
    if (source.source_type !== 'git_repo')
      throw new ServiceError('conflict', 'an inline policy source has nothing to sync', { source_type: source.source_type });
    return this.deps.sync.sync(org, source);
  }

  /** a git URL's transport is allowed and a literal IP host passes the egress guard (names are judged at sync) */
  private checkUrl(url: string): void {
    const remote = parseGitUrl(url, this.deps.allowLocal);
    if (remote.kind !== 'local')
      assertEgressAllowed(this.deps.egress, `${remote.kind}://${remote.host.includes(':') ? `[${remote.host}]` : remote.host}/`, 'git_url');
  }

  /** inline modules compile, each on its own and with the organization's bundle (400 with positions) */
  private async checkModules(org: OrgId, id: string, name: string, modules: readonly PolicySourceModule[]): Promise<void> {
    const errors = modules.flatMap((module) =>
      validate(module.rego, `${name}/${module.path}`).map(({ line, column, message }) => ({ file: `${name}/${module.path}`, line, column, message })),
    );
    if (new Set(modules.map((module) => module.path)).size !== modules.length)
      errors.push({ file: name, line: 1, column: 1, message: 'two modules share a path' });
    if (errors.length === 0) {
      try {
        await this.deps.bundles.build(org, { source: { id, name, modules } });
      } catch (error) {
        if (!(error instanceof RegoError)) throw error;
        errors.push({ file: error.location?.file ?? name, line: error.location?.line ?? 1, column: error.location?.column ?? 1, message: error.detail });
      }
    }
    if (errors.length > 0)
      throw new ServiceError('validation_error', `the modules do not compile: ${errors[0]?.file ?? ''}: ${errors[0]?.message ?? ''}`, {
        field: 'modules',
        errors,
      });
  }
}
