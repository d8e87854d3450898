/**
 * Policy enforcement on tool calls (feature `policies`): every enabled policy
 * of the organization is evaluated for each call. Any `deny` message denies;
 * a policy that defines `allow` denies unless allow is true; an evaluation
 * error denies (fail closed). Each decision is logged, and attached to the
 * task run's record when the call belongs to a task run.
 */
import type { Logger } from 'pino';
import type { ToolInterceptor } from '../../runtime/tools/interceptors.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { Collections } from '../collections.js';
import { RegoError, toJSON } from '../../runtime/policy/index.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PolicyAuditEntry } from '../tasks/types.js';
import type { OrgBundle, PolicyBundles } from './bundles.js';
import type { PolicyCall, PolicySubject, ToolCallGate } from '../../runtime/tools/tool-gate.js';
import type { ActivityRecorder } from '../activity/record.js';

export type { PolicyCall, PolicySubject } from '../../runtime/tools/tool-gate.js';

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
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? '****' : maskSecrets(item, depth + 1)]));
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
  if (value !== null && typeof value === 'object')
    return Object.entries(value)
      .filter(([, on]) => on !== false)
      .map(([message]) => message);
  return [typeof value === 'string' ? value : `denied by policy ${policy}`];
};

/** The decision of a bundle on one input (throws RegoError: callers deny on it). */
/** `nowNs`: what `time.now_ns()` answers (the runtime clock's time) */
export function decide(loaded: OrgBundle, input: Record<string, unknown>, nowNs?: bigint): { allowed: boolean; messages: string[] } {
  if (!loaded.bundle) return { allowed: true, messages: [] };
  const refs = loaded.policies.flatMap((policy) => [`data.${policy.packagePath}.deny`, `data.${policy.packagePath}.allow`]);
  const values = loaded.bundle.evalMany(refs, { input, strictBuiltinErrors: true, ...(nowNs === undefined ? {} : { nowNs }) });
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
  return { allowed: allowed && messages.length === 0, messages };
}

export class PolicyGate implements ToolCallGate {
  /** resolved argument objects already decided before the approval gate: the interceptor lets them through */
  private readonly decided = new WeakSet<object>();

  constructor(
    readonly enabled: boolean,
    private readonly bundles: PolicyBundles,
    private readonly collections: Collections,
    private readonly logger: Logger,
    // wall clock: the default of callers without a runtime clock
    private readonly now: () => number = Date.now,
    /** a denial is also an audit log entry ("a policy denial is audited") */
    private readonly activity: ActivityRecorder | null = null,
  ) {}

  /** evaluates every enabled policy of the organization on one input (never throws: an error denies) */
  async evaluate(org: OrgId, input: Record<string, unknown>): Promise<PolicyDecision> {
    let revision = 'unknown';
    try {
      const loaded = await this.bundles.get(org);
      revision = loaded.revision;
      return { ...decide(loaded, input, BigInt(this.now()) * 1_000_000n), revision, error: null };
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
    if (subject.task && call.runId)
      await this.audit(org, call.runId, { decision_id: logged.id, revision: decision.revision, tool: call.name, result, messages: decision.messages, at });
    if (decision.allowed) return null;
    if (this.activity) {
      await this.activity.audit(org, {
        actor: await this.activity.userActor(subject.user ?? null),
        action: 'deny',
        resource: { kind: 'tool_call', id: call.name },
        details: {
          decision_id: logged.id,
          run_id: call.runId ?? null,
          task_id: subject.task ?? null,
          binding_id: subject.binding ?? null,
          revision: decision.revision,
        },
      });
    }
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
