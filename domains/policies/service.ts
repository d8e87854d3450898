/**
 * Rego policies of an organization (feature `policies`): saved compiled (package
 * `service.<name>`), evaluated OPA-style with inline modules, checked against the
 * decision log (simulate) and their own `test_*` rules. Every change drops the
 * organization's cached bundle.
 */
import type { Collections } from '../collections.js';
import type { PolicyBundles } from './bundles.js';
import { moduleNameOf, packagePathOf } from './bundles.js';
import type { PolicyDoc } from './documents.js';
import { runPolicyTests, type PolicyTestReport } from './policy-tests.js';
import { simulate, type SimulationReport } from './simulate.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { ERROR_CATALOG, ServiceError, type ErrorCode } from '../../runtime/errors.js';
import { compile, RegoError, validate, type ModuleSource } from '../../runtime/policy/index.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

/** a RegoError as the API's error (its code when the catalogue has it) */
function regoFailure(error: unknown): never {
  if (error instanceof RegoError) {
    const code = (error.code in ERROR_CATALOG ? error.code : 'validation_error') as ErrorCode;
    throw new ServiceError(code, error.message, error.location ? { line: error.location.line, column: error.location.column } : undefined);
  }
  throw error;
}

export interface PolicyCreate {
  readonly name: string;
  readonly package_path?: string | undefined;
  readonly rego_code?: string | undefined;
  readonly rego_file?: string | undefined;
  readonly enabled: boolean;
}

export interface PolicyPatch {
  readonly name?: string | undefined;
  readonly package_path?: string | undefined;
  readonly rego_code?: string | undefined;
  readonly rego_file?: string | undefined;
  readonly enabled?: boolean | undefined;
}

export interface EvalRequest {
  readonly query: string;
  readonly input?: unknown;
  readonly data?: Record<string, unknown> | undefined;
  readonly modules?: readonly { readonly name?: string | undefined; readonly rego: string }[] | undefined;
  readonly strict_builtin_errors?: boolean | undefined;
}

type Source = { rego_code: string | null; rego_file: string | null };

const exactlyOneSource = (code: string | null | undefined, file: string | null | undefined): void => {
  if ((code == null) === (file == null)) {
    throw new ServiceError('validation_error', 'give exactly one of rego_code and rego_file', { fields: ['rego_code', 'rego_file'] });
  }
};

export class PolicyService {
  constructor(
    private readonly collections: Collections,
    private readonly bundles: PolicyBundles,
    private readonly clock: RuntimeClock,
  ) {}

  /** the policies as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['policies'], 'list' | 'revision'> {
    return this.collections.policies;
  }

  /** the decision log as a read-only listing */
  get decisionListing(): Pick<Collections['policyDecisions'], 'list' | 'revision'> {
    return this.collections.policyDecisions;
  }

  async create(org: OrgId, createdBy: string, body: PolicyCreate): Promise<PolicyDoc> {
    exactlyOneSource(body.rego_code, body.rego_file);
    if (body.package_path !== undefined && body.package_path !== packagePathOf(body.name)) {
      throw new ServiceError('validation_error', `package_path must be ${packagePathOf(body.name)}`, { field: 'package_path' });
    }
    const source = { rego_code: body.rego_code ?? null, rego_file: body.rego_file ?? null };
    await this.checkSource(org, body.name, source);
    const policy = await unique('policy', () =>
      this.collections.policies.insert(org, {
        name: body.name,
        package_path: packagePathOf(body.name),
        ...source,
        enabled: body.enabled,
        created_by: createdBy,
      }),
    );
    this.bundles.invalidate(org);
    return policy;
  }

  /** by id, or by name */
  async get(org: OrgId, idOrName: string): Promise<PolicyDoc> {
    const { policies } = this.collections;
    const policy = (await policies.get(org, idOrName)) ?? (await policies.findOne(org, { name: idOrName }));
    if (!policy) throw new ServiceError('not_found', `policy ${idOrName} not found`);
    return policy;
  }

  /** name and package_path are fixed; a new source is compiled before it is saved */
  async update(org: OrgId, id: string, body: PolicyPatch): Promise<PolicyDoc> {
    const { policies } = this.collections;
    const policy = await getOr404(policies, org, id, 'policy');
    rejectImmutable(policy, body, ['name', 'package_path']);
    if (body.rego_code !== undefined && body.rego_file !== undefined) exactlyOneSource(body.rego_code, body.rego_file);
    const source =
      body.rego_code !== undefined
        ? { rego_code: body.rego_code, rego_file: null }
        : body.rego_file !== undefined
          ? { rego_code: null, rego_file: body.rego_file }
          : null;
    if (source) await this.checkSource(org, policy.name, source);
    const updated = await policies.update(org, policy.id, {
      ...(source ?? {}),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    });
    if (!updated) throw new ServiceError('not_found', `policy ${id} not found`);
    this.bundles.invalidate(org);
    return updated;
  }

  async delete(org: OrgId, id: string): Promise<void> {
    const policy = await getOr404(this.collections.policies, org, id, 'policy');
    await this.collections.policies.delete(org, policy.id);
    this.bundles.invalidate(org);
  }

  /** a query over the enabled policies plus inline modules */
  async evaluate(org: OrgId, request: EvalRequest): Promise<Record<string, unknown>[]> {
    let modules: readonly ModuleSource[];
    try {
      modules = (await this.bundles.get(org)).modules;
    } catch (error) {
      regoFailure(error);
    }
    const inline = (request.modules ?? []).map((module, index) => ({ name: `inline/${module.name ?? `module${index}.rego`}`, source: module.rego }));
    try {
      const bundle = compile([...modules, ...inline]);
      return bundle.query(request.query, {
        ...(request.input === undefined ? {} : { input: request.input }),
        ...(request.data === undefined ? {} : { data: request.data }),
        strictBuiltinErrors: request.strict_builtin_errors ?? false,
      });
    } catch (error) {
      regoFailure(error);
    }
  }

  /** replays the decisions of the last `days` against the proposed policies (each package service.<name>, proposed once) */
  async simulate(
    org: OrgId,
    request: { readonly policies: readonly { readonly name: string; readonly rego: string }[]; readonly days: number; readonly limit: number },
  ): Promise<SimulationReport> {
    const proposed = new Map<string, string>();
    for (const policy of request.policies) {
      if (proposed.has(policy.name)) throw new ServiceError('validation_error', `policy ${policy.name} is proposed twice`, { field: 'policies' });
      let pkg: string | undefined;
      try {
        pkg = compile([{ name: `${policy.name}.rego`, source: policy.rego }]).modules[0]?.pkg.join('.');
      } catch (error) {
        regoFailure(error);
      }
      if (pkg !== packagePathOf(policy.name)) {
        throw new ServiceError('validation_error', `the proposed policy ${policy.name} must be package ${packagePathOf(policy.name)}, not ${pkg ?? '(none)'}`, {
          field: 'policies',
        });
      }
      proposed.set(policy.name, policy.rego);
    }
    try {
      return await simulate(this.collections, this.bundles, org, { policies: proposed, days: request.days, limit: request.limit, now: this.clock.now() });
    } catch (error) {
      regoFailure(error);
    }
  }

  /** the `test_*` rules of the policy's package, by id or name */
  async test(org: OrgId, idOrName: string): Promise<PolicyTestReport> {
    const policy = await this.get(org, idOrName);
    try {
      return await runPolicyTests(this.bundles, org, policy);
    } catch (error) {
      regoFailure(error);
    }
  }

  /** compiles the policy's source and checks its package (400 validation_error with positions) */
  private async checkSource(org: OrgId, name: string, source: Source): Promise<void> {
    // 422 rego_file_unresolved when the file is in no synced source and not in the organization's files
    const text = await this.bundles.sourceOf(org, source);
    const errors = validate(text, moduleNameOf({ name }));
    if (errors.length > 0) {
      throw new ServiceError('validation_error', `the policy does not compile: ${errors[0]?.message ?? ''}`, {
        errors: errors.map(({ line, column, message }) => ({ line, column, message })),
      });
    }
    const pkg = compile([{ name: moduleNameOf({ name }), source: text }]).modules[0]?.pkg.join('.');
    if (pkg !== packagePathOf(name)) {
      throw new ServiceError('validation_error', `the policy's package must be ${packagePathOf(name)}, not ${pkg ?? '(none)'}`, {
        errors: [{ line: 1, column: 1, message: `package must be ${packagePathOf(name)}` }],
      });
    }
  }
}
