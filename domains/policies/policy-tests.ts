/**
 * `opa test` for one policy: every `test_*` rule of the policy's package is
 * evaluated with the organization's bundle (the policy included even while
 * disabled). A test passes when it is true, fails when it is undefined or any
 * other value, and errors when its evaluation fails.
 */
import { performance } from 'node:perf_hooks';
import type { PolicyDoc } from './documents.js';
import { RegoError } from '../../runtime/policy/index.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PolicyBundles } from './bundles.js';

interface PolicyTestResult {
  readonly name: string;
  readonly result: 'pass' | 'fail' | 'error';
  readonly message?: string;
  readonly duration_ms: number;
}

export interface PolicyTestReport {
  readonly passed: number;
  readonly failed: number;
  readonly results: PolicyTestResult[];
}

/** @throws RegoError / ServiceError when the bundle does not build */
export async function runPolicyTests(bundles: PolicyBundles, org: OrgId, policy: PolicyDoc): Promise<PolicyTestReport> {
  const source = await bundles.sourceOf(org, policy);
  const { bundle } = await bundles.build(org, { policies: new Map([[policy.name, source]]) });
  const pkg = policy.package_path.split('.');
  const names = new Set<string>();
  for (const module of bundle?.modules ?? []) {
    for (const rule of module.rules) {
      const path = rule.path ?? [];
      const name = path[pkg.length];
      if (rule.args === null && path.length === pkg.length + 1 && pkg.every((part, index) => path[index] === part) && name?.startsWith('test_') === true)
        names.add(name);
    }
  }
  const results: PolicyTestResult[] = [];
  for (const name of [...names].sort()) {
    const started = performance.now();
    let outcome: Pick<PolicyTestResult, 'result' | 'message'>;
    try {
      const value = bundle?.eval(`data.${policy.package_path}.${name}`);
      outcome =
        value === true ? { result: 'pass' } : { result: 'fail', message: value === undefined ? 'undefined' : `value ${JSON.stringify(value)}, not true` };
    } catch (error) {
      if (!(error instanceof RegoError)) throw error;
      outcome = { result: 'error', message: error.message };
    }
    results.push({ name, ...outcome, duration_ms: Math.round((performance.now() - started) * 1000) / 1000 });
  }
  const passed = results.filter((entry) => entry.result === 'pass').length;
  return { passed, failed: results.length - passed, results };
}
