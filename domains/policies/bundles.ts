/**
 * The organization's policy bundle: its enabled policies and the modules of its
 * enabled policy sources compiled together, cached per organization and
 * dropped whenever a policy or a source of the organization changes. The
 * revision names the set of modules a decision was made with.
 */
import { createHash } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { compile, type CompiledBundle, type ModuleSource } from '../../runtime/policy/index.js';
import type { Collections } from '../collections.js';
import type { PolicyDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import type { FileStore } from '../../runtime/files/store.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PolicySourceDoc, PolicySourceModule } from './types.js';

interface LoadedPolicy {
  /** the policy's id, or the source's for a package that comes from a source */
  readonly id: string;
  readonly name: string;
  /** `service.<name>` for a policy; a source module's own package */
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

/** What a bundle is built from besides the store (simulations, sync candidates). */
export interface BundleChanges {
  /** proposed policy sources by policy name: replace the policy's module, or add one */
  readonly policies?: ReadonlyMap<string, string>;
  /** a source's modules as a sync or a save would leave them (the source need not be stored yet) */
  readonly source?: { readonly id: string; readonly name: string; readonly modules: readonly PolicySourceModule[] };
}

export const packagePathOf = (name: string): string => `service.${name}`;

/** The module name a policy compiles under (its errors name it). */
export const moduleNameOf = (policy: Pick<PolicyDoc, 'name'>): string => `${policy.name}.rego`;

/** `<source name>/<path>`: how a policy's rego_file names a module of a policy source */
const splitSourcePath = (file: string): { source: string; path: string } | null => {
  const slash = file.indexOf('/');
  return slash <= 0 ? null : { source: file.slice(0, slash), path: file.slice(slash + 1) };
};

const unresolved = (file: string, why: string): ServiceError =>
  new ServiceError('rego_file_unresolved', `rego_file ${file} does not resolve: ${why}`, { field: 'rego_file' });

export class PolicyBundles {
  private readonly cache = new Map<OrgId, Promise<OrgBundle>>();
  /** the active bundles' revision in this process (`/health`): goes up with every policy change of any organization */
  generation = 0;

  constructor(
    private readonly collections: Collections,
    private readonly files: FileStore,
  ) {}

  /**
   * The policy's source: its code, or its rego_file read now: `<source name>/<path>` in a
   * policy source's synced modules, else a path in the organization's files.
   * @throws 422 rego_file_unresolved
   */
  async sourceOf(org: OrgId, policy: Pick<PolicyDoc, 'rego_code' | 'rego_file'>, changes: BundleChanges = {}): Promise<string> {
    if (policy.rego_code !== null) return policy.rego_code;
    const file = policy.rego_file ?? '';
    const split = splitSourcePath(file);
    const source = split === null ? null : await this.collections.policySources.findOne(org, { name: split.source });
    if (source !== null && split !== null) {
      const modules = changes.source?.id === source.id ? changes.source.modules : source.modules;
      const module = modules.find((candidate) => candidate.path === split.path);
      if (module === undefined) throw unresolved(file, `policy source ${source.name} has no module ${split.path} (synced: ${modules.length} modules)`);
      return module.rego;
    }
    try {
      const { stream } = await this.files.open(org, file);
      return await text(stream);
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found') {
        throw unresolved(file, "no policy source of that name and no such file in the organization's files");
      }
      throw error;
    }
  }

  /** The compiled bundle (throws RegoError when a policy no longer compiles, e.g. its file changed). */
  get(org: OrgId): Promise<OrgBundle> {
    let loaded = this.cache.get(org);
    if (!loaded) {
      loaded = this.build(org);
      this.cache.set(org, loaded);
      // a failed load is not cached: the next call tries again
      loaded.catch(() => this.cache.delete(org));
    }
    return loaded;
  }

  /** a policy or a policy source of the organization was created, changed, synced or deleted */
  invalidate(org: OrgId): void {
    this.generation += 1;
    this.cache.delete(org);
  }

  /** Builds the bundle from the store with `changes` applied (not cached). @throws RegoError, ServiceError */
  async build(org: OrgId, changes: BundleChanges = {}): Promise<OrgBundle> {
    const all = await this.collections.policies.findAll(org);
    const docs = all.filter((doc) => doc.enabled || changes.policies?.has(doc.name) === true).sort((a, b) => (a.id < b.id ? -1 : 1));
    const parts: { id: string; name: string; packagePath: string | null; stamp: string; module: ModuleSource }[] = [];
    for (const doc of docs) {
      const proposed = changes.policies?.get(doc.name);
      const source = proposed ?? (await this.sourceOf(org, doc, changes));
      parts.push({
        id: doc.id,
        name: doc.name,
        packagePath: doc.package_path,
        stamp: proposed === undefined ? doc.updated_at : 'proposed',
        module: { name: moduleNameOf(doc), source },
      });
    }
    for (const [name, source] of changes.policies ?? []) {
      if (!docs.some((doc) => doc.name === name))
        parts.push({ id: `proposed:${name}`, name, packagePath: packagePathOf(name), stamp: 'proposed', module: { name: moduleNameOf({ name }), source } });
    }
    // a file a policy's rego_file names is governed by that policy (its enabled flag), not added twice
    const claimed = new Set(all.map((doc) => doc.rego_file).filter((file): file is string => file !== null));
    // a sync candidate is compiled even while its source is disabled: a bad module is refused all the same
    const sources = (await this.collections.policySources.findAll(org))
      .filter((source) => source.enabled || source.id === changes.source?.id)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const entries = sources.map((source) => ({
      id: source.id,
      name: source.name,
      stamp: `${source.updated_at}\0${source.commit ?? ''}`,
      modules: this.modulesOf(source, changes),
    }));
    if (changes.source !== undefined && !sources.some((source) => source.id === changes.source?.id)) entries.push({ ...changes.source, stamp: 'proposed' });
    for (const source of entries) {
      for (const module of source.modules) {
        const name = `${source.name}/${module.path}`;
        if (claimed.has(name)) continue;
        parts.push({ id: source.id, name: source.name, packagePath: null, stamp: source.stamp, module: { name, source: module.rego } });
      }
    }
    const hash = createHash('sha256');
    for (const part of parts) hash.update(`${part.id}\0${part.module.name ?? ''}\0${part.stamp}\0${part.module.source}\0`);
    const modules = parts.map((part) => part.module);
    const bundle = parts.length === 0 ? null : compile(modules);
    const rulePaths = new Set((bundle?.modules ?? []).flatMap((module) => module.rules.map((rule) => (rule.path ?? []).join('.'))));
    // one entry per package: a policy's is `service.<name>`, a source module's is the one it declares
    const policies = new Map<string, LoadedPolicy>();
    parts.forEach((part, index) => {
      const packagePath = part.packagePath ?? bundle?.modules[index]?.pkg.join('.') ?? '';
      if (policies.has(packagePath)) return;
      policies.set(packagePath, {
        id: part.id,
        name: part.packagePath === null ? `${part.name}:${packagePath}` : part.name,
        packagePath,
        definesAllow: rulePaths.has(`${packagePath}.allow`),
      });
    });
    return { revision: parts.length === 0 ? 'empty' : hash.digest('hex').slice(0, 16), policies: [...policies.values()], modules, bundle };
  }

  private modulesOf(source: PolicySourceDoc, changes: BundleChanges): readonly PolicySourceModule[] {
    return changes.source?.id === source.id ? changes.source.modules : source.modules;
  }
}
