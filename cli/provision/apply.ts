/**
 * Apply: carry out a plan in order (removed resources first, dependents
 * before what they depend on; then creates, updates and replacements in
 * dependency order), writing the state after every step. The first failure
 * stops the apply; the state then holds exactly what was done.
 */
import { CliError, usage } from '../errors.js';
import type { EvaluationInput, Plan, PlannedChange } from './plan.js';
import { dependenciesOf, desiredAttributes, isUnknownFree, Scope, variableValues } from './plan.js';
import { RESOURCE_KINDS } from './kinds/index.js';
import type { Api, Attributes, ResourceKind, Value } from './schema.js';
import { writeState, type ResourceState, type StateDocument } from './state.js';

export interface StepReport {
  readonly address: string;
  readonly action: PlannedChange['action'];
  readonly id: string | null;
}

/** state with the sensitive values configuration set (the API masks them on read) */
function stateOf(kind: ResourceKind, result: Attributes, desired: Readonly<Record<string, Value>>, dependencies: readonly string[]): ResourceState {
  const attributes: Record<string, Value> = { ...result };
  for (const [name, attribute] of Object.entries(kind.attributes)) if (attribute.sensitive && desired[name] !== undefined) attributes[name] = desired[name];
  const id = result['id'];
  if (typeof id !== 'string' || id === '') throw new CliError('api_error', `${kind.name}: the server answered no id`);
  return { kind: kind.name, id, attributes, ...(dependencies.length > 0 ? { dependencies } : {}) };
}

/** removed resources in an order where a dependent goes before what it depends on */
export function deletionOrder(deletes: readonly PlannedChange[]): PlannedChange[] {
  const remaining = [...deletes];
  const ordered: PlannedChange[] = [];
  while (remaining.length > 0) {
    const index = remaining.findIndex(
      (candidate) => !remaining.some((other) => other !== candidate && (other.prior?.dependencies ?? []).includes(candidate.address)),
    );
    // a cycle in old state: take them as listed
    const [next] = remaining.splice(index === -1 ? 0 : index, 1);
    ordered.push(next as PlannedChange);
  }
  return ordered;
}

export async function applyPlan(
  api: Api,
  input: EvaluationInput,
  plan: Plan,
  state: StateDocument,
  statePath: string,
  onStep: (report: StepReport) => void,
): Promise<StepReport[]> {
  state.resources = { ...plan.refreshed };
  writeState(statePath, state);
  const declared = new Set([...input.config.resources.map((block) => block.address), ...input.config.data.map((block) => block.address)]);
  const scope = new Scope(
    variableValues(input),
    plan.data,
    new Map(Object.entries(state.resources).map(([address, entry]) => [address, { ...entry.attributes }])),
    declared,
  );
  const done: StepReport[] = [];
  const report = (change: PlannedChange, id: string | null) => {
    const step = { address: change.address, action: change.action, id };
    done.push(step);
    onStep(step);
  };

  const deletes = deletionOrder(plan.changes.filter((change) => change.action === 'delete'));
  const others = plan.changes.filter((change) => change.action !== 'delete');
  for (const change of [...deletes, ...others]) {
    try {
      const deferDelete = change.action === 'replace' && change.kind.createBeforeDestroy === true;
      if (change.action === 'delete' || (change.action === 'replace' && !deferDelete)) {
        const prior = change.prior as ResourceState;
        await change.kind.delete(api, prior.id);
        delete state.resources[change.address];
        scope.resources.delete(change.address);
        writeState(statePath, state);
        if (change.action === 'delete') {
          report(change, prior.id);
          continue;
        }
      }
      if (change.action === 'noop') {
        continue;
      }
      const block = change.block;
      if (block === null) continue;
      const desired = desiredAttributes(block, change.kind, scope);
      if (!isUnknownFree(desired)) throw usage(`${change.address}: a value is still unknown at apply`);
      const result =
        change.action === 'update'
          ? await change.kind.update(api, (change.prior as ResourceState).id, desired, (change.prior as ResourceState).attributes)
          : await change.kind.create(api, desired);
      const entry = stateOf(change.kind, result, desired, dependenciesOf(block));
      if (deferDelete) (state.deposed ??= []).push({ ...(change.prior as ResourceState), address: change.address });
      state.resources[change.address] = entry;
      scope.resources.set(change.address, { ...entry.attributes });
      writeState(statePath, state);
      report(change, entry.id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const reason = error instanceof CliError ? error.reason : 'api_error';
      throw new CliError(
        reason,
        `apply stopped at ${change.address} (${change.action}): ${message}. ${done.length} change(s) applied before it are in the state`,
      );
    }
  }
  await deleteDeposed(api, state, statePath, onStep);
  return done;
}

/** the old objects of create-before-destroy replacements, newest first, each dropped from the state once gone */
async function deleteDeposed(api: Api, state: StateDocument, statePath: string, onStep: (report: StepReport) => void): Promise<void> {
  while (state.deposed !== undefined && state.deposed.length > 0) {
    const old = state.deposed[state.deposed.length - 1] as ResourceState & { address: string };
    const kind = RESOURCE_KINDS.get(old.kind);
    try {
      if (kind) await kind.delete(api, old.id);
    } catch (error) {
      throw new CliError(
        error instanceof CliError ? error.reason : 'api_error',
        `apply stopped deleting the replaced ${old.address} (id ${old.id}): ${(error as Error).message}. It stays in the state as deposed and is retried by the next apply`,
      );
    }
    state.deposed.pop();
    if (state.deposed.length === 0) delete state.deposed;
    writeState(statePath, state);
    onStep({ address: old.address, action: 'delete', id: old.id });
  }
}
