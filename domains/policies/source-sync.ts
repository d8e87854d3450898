/**
 * Syncing a git policy source: judge the remote's host with the egress guard,
 * fetch with the system git into the source's own repository under
 * DATA_DIR/policy-sources/<org>/<source id>, and compile the organization's
 * bundle with the fetched modules. Only a bundle that compiles replaces the
 * source's modules; otherwise the failure is recorded on the source and the
 * previous modules (so the previous bundle) stay active. One sync per source
 * at a time.
 */
import type { LookupAddress } from 'node:dns';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { EgressRefusedError, type EgressGuard } from '../../runtime/net/egress.js';
import { RegoError, validate } from '../../runtime/policy/index.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PolicyBundles } from './bundles.js';
import { fetchRegoModules, GitSyncError } from './git-fetch.js';
import { parseGitUrl, type GitRemote } from './git-url.js';
import type { PolicySourceKeys } from './source-secrets.js';
import type { PolicySourceDoc, PolicySourceModule } from './types.js';

type SyncError = NonNullable<PolicySourceDoc['last_sync_error']>;

export interface PolicySourceSyncOptions {
  readonly collections: Collections;
  readonly bundles: PolicyBundles;
  readonly keys: PolicySourceKeys;
  readonly egress: Pick<EgressGuard, 'lookup'>;
  readonly dataDir: string;
  readonly allowLocal: boolean;
  readonly logger: Logger;
}

export class PolicySourceSync {
  private readonly running = new Set<string>();

  constructor(private readonly options: PolicySourceSyncOptions) {}

  /** where the source's fetched repository lives */
  repoDir(org: OrgId, sourceId: string): string {
    return join(this.options.dataDir, 'policy-sources', org, sourceId);
  }

  /** forgets a deleted source's repository */
  async remove(org: OrgId, sourceId: string): Promise<void> {
    await rm(this.repoDir(org, sourceId), { recursive: true, force: true });
  }

  /**
   * Syncs now; the source as it stands after a good sync.
   * @throws 409 sync_in_progress, 422 egress_refused, 422 policy_sync_failed (recorded on the source)
   */
  async sync(org: OrgId, source: PolicySourceDoc): Promise<PolicySourceDoc> {
    const lock = `${org}/${source.id}`;
    if (this.running.has(lock)) throw new ServiceError('sync_in_progress', `policy source ${source.name} is already syncing`, { source_id: source.id });
    this.running.add(lock);
    try {
      await this.options.collections.policySources.update(org, source.id, { last_sync_status: 'running' });
      return await this.attempt(org, source);
    } finally {
      this.running.delete(lock);
    }
  }

  private async attempt(org: OrgId, source: PolicySourceDoc): Promise<PolicySourceDoc> {
    const { collections, bundles, logger } = this.options;
    let fetched: { commit: string; modules: PolicySourceModule[] };
    try {
      const remote = parseGitUrl(source.git_url ?? '', this.options.allowLocal);
      fetched = await fetchRegoModules({
        repoDir: this.repoDir(org, source.id),
        remote,
        branch: source.git_branch,
        path: source.git_path,
        sshKey: source.git_ssh_key_sealed === null ? null : this.options.keys.open(org, source.id, source.git_ssh_key_sealed),
        address: await this.judge(remote),
      });
    } catch (error) {
      if (error instanceof EgressRefusedError) {
        await this.fail(org, source, [{ message: error.message, file: null, line: null, column: null }]);
        throw new ServiceError('egress_refused', `git_url: ${error.message}`, { field: 'git_url', ...error.refusal });
      }
      const known = error instanceof GitSyncError || error instanceof ServiceError;
      // anything else (a key that no longer opens, a disk error) is recorded too, then answered as a 500
      const errors = [{ message: known ? error.message : 'the sync failed unexpectedly (see the server log)', file: null, line: null, column: null }];
      await this.fail(org, source, errors);
      if (!known) throw error;
      throw failed(source, errors, null);
    }
    const errors = moduleErrors(source, fetched.modules);
    if (errors.length === 0) {
      try {
        await bundles.build(org, { source: { id: source.id, name: source.name, modules: fetched.modules } });
      } catch (error) {
        if (!(error instanceof RegoError) && !(error instanceof ServiceError)) throw error;
        const location = error instanceof RegoError ? error.location : undefined;
        errors.push({
          message: error instanceof RegoError ? error.detail : error.message,
          file: location?.file ?? null,
          line: location?.line ?? null,
          column: location?.column ?? null,
        });
      }
    }
    if (errors.length > 0) {
      await this.fail(org, source, errors);
      throw failed(source, errors, fetched.commit);
    }
    const updated = await collections.policySources.update(org, source.id, {
      modules: fetched.modules,
      commit: fetched.commit,
      last_sync_status: 'succeeded',
      last_sync_error: null,
      last_synced_at: new Date().toISOString(),
    });
    if (!updated) throw new ServiceError('not_found', `policy source ${source.id} not found`);
    bundles.invalidate(org);
    logger.info({ org, source_id: source.id, commit: fetched.commit, modules: fetched.modules.length }, 'policy source synced');
    return updated;
  }

  /** the address git will connect to, judged by the egress guard (null for a local repository) */
  private judge(remote: GitRemote): Promise<string | null> {
    if (remote.kind === 'local') return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.options.egress.lookup(remote.host, { all: true }, (error, addresses) => {
        if (error) return reject(error instanceof EgressRefusedError ? error : new GitSyncError(`cannot resolve ${remote.host}: ${error.message}`));
        const first = (addresses as LookupAddress[])[0];
        if (first === undefined) return reject(new GitSyncError(`${remote.host} has no address`));
        resolve(first.address);
      });
    });
  }

  private async fail(org: OrgId, source: PolicySourceDoc, errors: readonly SyncError[]): Promise<void> {
    await this.options.collections.policySources.update(org, source.id, {
      last_sync_status: 'failed',
      last_sync_error: errors[0] ?? null,
      last_synced_at: new Date().toISOString(),
    });
    this.options.logger.warn({ org, source_id: source.id, error: errors[0]?.message }, 'policy source sync failed; the previous modules stay active');
  }
}

/** every module checked on its own first, so each error names its file */
function moduleErrors(source: PolicySourceDoc, modules: readonly PolicySourceModule[]): SyncError[] {
  return modules.flatMap((module) =>
    validate(module.rego, `${source.name}/${module.path}`).map(({ line, column, message }) => ({
      message,
      file: `${source.name}/${module.path}`,
      line,
      column,
    })),
  );
}

const failed = (source: PolicySourceDoc, errors: readonly SyncError[], commit: string | null): ServiceError =>
  new ServiceError(
    'policy_sync_failed',
    `policy source ${source.name} did not sync: ${errors[0]?.file ? `${errors[0].file}:${errors[0].line ?? 0}:${errors[0].column ?? 0}: ` : ''}${errors[0]?.message ?? ''}`,
    {
      source_id: source.id,
      commit,
      errors,
    },
  );
