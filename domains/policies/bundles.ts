/**
 * The organization's policy bundle: its enabled policies compiled together,
 * cached per organization and dropped whenever a policy of the organization
 * changes. The revision names the set of policies a decision was made with.
 */
import { createHash } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { compile, type CompiledBundle, type ModuleSource } from '../../runtime/policy/index.js';
import type { Collections } from '../collections.js';
import type { PolicyDoc } from './documents.js';
import type { FileStore } from '../../runtime/files/store.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface LoadedPolicy {
  readonly id: string;
  readonly name: string;
  /** `service.<name>` */
  readonly packagePath: string;
  /** the policy has an `allow` rule (then allow must be true) */
  readonly definesAllow: boolean;
}

export interface OrgBundle {
  readonly revision: string;
  readonly policies: readonly LoadedPolicy[];
  readonly modules: readonly ModuleSource[];
  /** null when the organization has no enabled policy */
  readonly bundle: CompiledBundle | null;
}

export const packagePathOf = (name: string): string => `service.${name}`;

/** The module name a policy compiles under (its errors name it). */
export const moduleNameOf = (policy: Pick<PolicyDoc, 'name'>): string => `${policy.name}.rego`;

export class PolicyBundles {
  private readonly cache = new Map<OrgId, Promise<OrgBundle>>();
  /** the active bundles' revision in this process (`/health`): goes up with every policy change of any organization */
  generation = 0;

  constructor(
    private readonly collections: Collections,
    private readonly files: FileStore,
  ) {}

  /** The policy's source: its code, or its file read now (throws not_found when the file is gone). */
  async sourceOf(org: OrgId, policy: Pick<PolicyDoc, 'rego_code' | 'rego_file'>): Promise<string> {
    if (policy.rego_code !== null) return policy.rego_code;
    const { stream } = await this.files.open(org, policy.rego_file ?? '');
    return text(stream);
  }

  /** The compiled bundle (throws RegoError when a policy no longer compiles, e.g. its file changed). */
  get(org: OrgId): Promise<OrgBundle> {
    let loaded = this.cache.get(org);
    if (!loaded) {
      loaded = this.load(org);
      this.cache.set(org, loaded);
      // a failed load is not cached: the next call tries again
      loaded.catch(() => this.cache.delete(org));
    }
    return loaded;
  }

  /** a policy of the organization was created, changed or deleted */
  invalidate(org: OrgId): void {
    this.generation += 1;
    this.cache.delete(org);
  }

  private async load(org: OrgId): Promise<OrgBundle> {
    const docs = (await this.collections.policies.findAll(org, { enabled: true })).sort((a, b) => (a.id < b.id ? -1 : 1));
    const modules: ModuleSource[] = [];
    for (const doc of docs) modules.push({ name: moduleNameOf(doc), source: await this.sourceOf(org, doc) });
    const hash = createHash('sha256');
    for (const [index, doc] of docs.entries()) hash.update(`${doc.id}\0${doc.updated_at}\0${modules[index]?.source ?? ''}\0`);
    const revision = docs.length === 0 ? 'empty' : hash.digest('hex').slice(0, 16);
    const bundle = docs.length === 0 ? null : compile(modules);
    const allowPaths = new Set(
      (bundle?.modules ?? []).flatMap((module) => module.rules.map((rule) => (rule.path ?? []).join('.'))),
    );
    const policies = docs.map((doc) => ({
      id: doc.id,
      name: doc.name,
      packagePath: doc.package_path,
      definesAllow: allowPaths.has(`${doc.package_path}.allow`),
    }));
    return { revision, policies, modules, bundle };
  }
}
