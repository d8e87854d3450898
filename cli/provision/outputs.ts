/**
 * Output blocks. Checked at plan time: an output that shows a sensitive value
 * (a sensitive attribute or variable) must say `sensitive = true`, as
 * Terraform requires. Evaluated against the state at the end of an apply and
 * kept in it; shown after apply with sensitive ones masked, and by
 * `provision output` (a named one in clear, as `terraform output NAME` does).
 */
import { CliError, usage } from '../errors.js';
import type { Configuration } from './config.js';
import { hasUnknown, referencePaths, resolve } from './expressions.js';
import { RESOURCE_KINDS } from './kinds/index.js';
import type { EvaluationInput } from './plan.js';
import { Scope, variableValues } from './plan.js';
import type { Attributes, Value } from './schema.js';
import type { StateDocument } from './state.js';

export interface OutputValue {
  readonly value: Value;
  readonly sensitive: boolean;
}

/** throws when an output refers to something not declared, or (not marked sensitive) to a sensitive value: before apply changes anything */
export function checkOutputs(config: Configuration): void {
  const declared = new Set([...config.resources.map((block) => block.address), ...config.data.map((block) => block.address)]);
  for (const [name, output] of config.outputs) {
    for (const reference of referencePaths(output.value)) {
      const names = reference.map((step) => (step.kind === 'name' ? step.name : `[${step.index}]`));
      const [first = '', second = '', third] = names;
      const known = first === 'var' ? config.variables.has(second) : declared.has(names.slice(0, first === 'data' ? 3 : 2).join('.'));
      if (!known) throw usage(`output "${name}": ${names.join('.')} is not declared`);
      if (output.sensitive) continue;
      let secret: boolean;
      if (first === 'var') secret = config.variables.get(second)?.sensitive === true;
      else if (first === 'data') secret = false;
      else {
        const attributes = RESOURCE_KINDS.get(first)?.attributes ?? {};
        // the whole object holds its sensitive attributes too
        secret = third === undefined ? Object.values(attributes).some((attribute) => attribute.sensitive) : attributes[third]?.sensitive === true;
      }
      if (secret) throw usage(`output "${name}" shows the sensitive value ${names.join('.')}: mark the output sensitive = true`);
    }
  }
}

/** the outputs' values over the state after an apply */
export function evaluateOutputs(input: EvaluationInput, data: ReadonlyMap<string, Attributes>, state: StateDocument): Record<string, OutputValue> {
  const { config } = input;
  const declared = new Set([...config.resources.map((block) => block.address), ...config.data.map((block) => block.address)]);
  const scope = new Scope(
    variableValues(input),
    data,
    new Map(Object.entries(state.resources).map(([address, entry]) => [address, { ...entry.attributes }])),
    declared,
  );
  const outputs: Record<string, OutputValue> = {};
  for (const [name, output] of config.outputs) {
    const value = resolve(output.value, scope.lookup);
    if (hasUnknown(value)) throw new CliError('api_error', `output "${name}" is still unknown after apply`);
    outputs[name] = { value: value as Value, sensitive: output.sensitive };
  }
  return outputs;
}

/** the outputs as apply shows them: sensitive ones masked */
export const maskedOutputs = (outputs: Readonly<Record<string, OutputValue>>): Record<string, Value> =>
  Object.fromEntries(Object.entries(outputs).map(([name, output]) => [name, output.sensitive ? '(sensitive)' : output.value]));
