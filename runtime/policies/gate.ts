/**
 * Policy enforcement on tool calls (feature `policies`): every enabled policy
 * of the organization is evaluated for each call. Any `deny` message denies;
 * a policy that defines `allow` denies unless allow is true; an evaluation
 * error denies (fail closed). Each decision is logged, and attached to the
 * task run's record when the call belongs to a task run.
 */
import type { Logger } from 'pino';
import type { ToolInterceptor } from '../../connectors/interceptors.js';
import type { ToolEffect } from '../../connectors/contract.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../../connectors/tool-result.js';
import type { Collections } from '../collections.js';
import { RegoError, toJSON } from '../policy/index.js';
import type { OrgId } from '../store/types.js';
import type { PolicyAuditEntry } from '../tasks/types.js';
import type { PolicyBundles } from './bundles.js';

/** who a run acts for: its task, its channel binding, its user */
export interface PolicySubject {
  readonly task?: string | null;
  readonly binding?: string | null;
  readonly user?: string | null;
}

/** the call a decision is about */
export interface PolicyCall {
  /** `<connector>.<tool>` */
  readonly name: string;
  readonly connector: string;
  readonly effect: ToolEffect;
  readonly args: Readonly<Record<string, unknown>>;
  readonly orgId: string;
  readonly runId?: string;
}

export interface PolicyDecision {
  readonly allowed: boolean;
  readonly messages: string[];
  readonly revision: string;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** argument keys whose values never reach the decision log */
const SECRET_KEY = /token|secret|password|passwd|key|credential|authorization/i;
const MAX_MASK_DEPTH = 20;

export function maskSecrets(value: unknown, depth = 0): unknown {
  if (depth > MAX_MASK_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? '****' : maskSecrets(item, depth + 1)]),
    );
  }
  return value;
}

export const policyInput = (call: PolicyCall, subject: PolicySubject): Record<string, unknown> => ({
  subject: { task: subject.task ?? null, binding: subject.binding ?? null, user: subject.user ?? null },
  resource: { connector: call.connector, tool: call.name, tool_effect: call.effect, args: call.args },
  action: call.effect,
});

const denyMessages = (value: unknown, policy: string): string[] => {
  if (value === undefined || value === false) return [];
  if (Array.isArray(value)) return value.map((message) => (typeof message === 'string' ? message : JSON.stringify(message)));
  // the spec's `deny[msg] { … }` is, in Rego v1, an object of `msg: true`: its keys are the messages
  if (value !== null && typeof value === 'object') return Object.entries(value).filter(([, on]) => on !== false).map(([message]) => message);
  return [typeof value === 'string' ? value : `denied by policy ${policy}`];
};

export class PolicyGate {
  /** resolved argument objects already decided before the approval gate: the interceptor lets them through */
  private readonly decided = new WeakSet<object>();

  constructor(
    readonly enabled: boolean,
    private readonly bundles: PolicyBundles,
    private readonly collections: Collections,
    private readonly logger: Logger,
    // wall clock: the default of callers without a runtime clock
    private readonly now: () => number = Date.now,
  ) {}

  /** evaluates every enabled policy of the organization on one input (never throws: an error denies) */
  async evaluate(org: OrgId, input: Record<string, unknown>): Promise<PolicyDecision> {
    let revision = 'unknown';
    try {
      const loaded = await this.bundles.get(org);
      revision = loaded.revision;
      if (!loaded.bundle) return { allowed: true, messages: [], revision, error: null };
      const refs = loaded.policies.flatMap((policy) => [`data.${policy.packagePath}.deny`, `data.${policy.packagePath}.allow`]);
      const values = loaded.bundle.evalMany(refs, { input, strictBuiltinErrors: true, nowNs: BigInt(this.now()) * 1_000_000n });
      const messages: string[] = [];
      let allowed = true;
      loaded.policies.forEach((policy, index) => {
        const deny = values[index * 2];
        const allow = values[index * 2 + 1];
        messages.push(...denyMessages(deny === undefined ? undefined : toJSON(deny), policy.name));
        if (policy.definesAllow && allow !== true) {
          allowed = false;
          if (messages.length === 0) messages.push(`not allowed by policy ${policy.name}`);
        }
      });
      return { allowed: allowed && messages.length === 0, messages, revision, error: null };
    } catch (error) {
      const code = error instanceof RegoError ? error.code : 'internal_error';
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn({ org, code, err: message }, 'policy evaluation failed: the tool call is denied');
      return { allowed: false, messages: [`policy evaluation failed: ${message}`], revision, error: { code, message } };
    }
  }

  /** decides one call, logs the decision; the denial outcome, or null when allowed */
  async check(call: PolicyCall, subject: PolicySubject): Promise<ToolOutcome | null> {
    const org = call.orgId as OrgId;
    const input = policyInput(call, subject);
    const decision = await this.evaluate(org, input);
    const at = new Date(this.now()).toISOString();
    const result = decision.allowed ? 'allow' : 'deny';
    const logged = await this.collections.policyDecisions.insert(org, {
      revision: decision.revision,
      input: maskSecrets(input) as Record<string, unknown>,
      result,
      messages: decision.messages,
      error: decision.error,
      run_id: call.runId ?? null,
      at,
    });
    if (subject.task && call.runId) await this.audit(org, call.runId, { decision_id: logged.id, revision: decision.revision, tool: call.name, result, messages: decision.messages, at });
    if (decision.allowed) return null;
    return failedOutcome(
      toolErrorBody('policy_denied', `denied by policy: ${decision.messages.join('; ')}`, {
        messages: decision.messages,
        decision_id: logged.id,
      }),
    );
  }

  /** the call is decided before the approval gate; the interceptor will not decide it again */
  async precheck(call: PolicyCall, subject: PolicySubject): Promise<ToolOutcome | null> {
    const outcome = await this.check(call, subject);
    if (outcome === null) this.decided.add(call.args);
    return outcome;
  }

  /** the one policy interceptor of a catalog (outermost), for the calls no precheck decided */
  interceptor(subject: PolicySubject): ToolInterceptor {
    return async (call, next) => {
      if (this.decided.has(call.args)) return next();
      return (await this.check(call, subject)) ?? next();
    };
  }

  /** whether a tool is denied whatever its arguments (judged with empty args; not logged) */
  async hides(org: OrgId, tool: Omit<PolicyCall, 'args' | 'orgId'>, subject: PolicySubject): Promise<boolean> {
    const decision = await this.evaluate(org, policyInput({ ...tool, args: {}, orgId: org }, subject));
    return !decision.allowed;
  }

  private async audit(org: OrgId, runId: string, entry: PolicyAuditEntry): Promise<void> {
    const run = await this.collections.taskRuns.get(org, runId);
    if (!run) return;
    await this.collections.taskRuns.update(org, runId, { policy_audit: [...(run.policy_audit ?? []), entry] });
  }
}
