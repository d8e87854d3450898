/**
 * `provision plan | apply | destroy | import | state | output | docs`: declarative
 * provisioning of the service's resources from a folder of `.tf` files
 * (cli/provision/ holds the engine).
 */
import { join, resolve } from 'node:path';
import type { ApiClient } from '../api.js';
import type { Args, Command, CommandContext } from '../command.js';
import { usage } from '../errors.js';
import { applyPlan, deletionOrder } from '../provision/apply.js';
import { loadConfiguration } from '../provision/config.js';
import { kindsMarkdown } from '../provision/docs.js';
import { kindOf, makePlan, refresh, type EvaluationInput, type Plan } from '../provision/plan.js';
import { RESOURCE_KINDS } from '../provision/kinds/index.js';
import { planJson, renderPlan } from '../provision/render.js';
import { lockState, readState, writeState } from '../provision/state.js';
import { canonical, shown } from '../provision/values.js';
import { checkOutputs, evaluateOutputs, maskedOutputs } from '../provision/outputs.js';

const FOLDER_OPTIONS = {
  dir: { type: 'string' },
  state: { type: 'string' },
  var: { type: 'string', multiple: true },
} as const;
/** plan and apply also take `--replace` */
const PLAN_OPTIONS = { ...FOLDER_OPTIONS, replace: { type: 'string', multiple: true } } as const;
const FOLDER_USAGE = '[--dir <folder>] (default .) [--state <file>] (default <folder>/service.tfstate.json) [--var NAME=VALUE]... (also TF_VAR_NAME)';
const PLAN_USAGE = `${FOLDER_USAGE} [--replace <address>]... (replace it though no immutable attribute changed)`;

interface Workspace {
  readonly folder: string;
  readonly statePath: string;
  readonly input: EvaluationInput;
}

/** the configuration folder (--dir, default .) and the state file (--state, default in that folder) */
function folderAndState(args: Args): { folder: string; statePath: string } {
  const folder = resolve(args.string('dir') ?? '.');
  return { folder, statePath: resolve(args.string('state') ?? join(folder, 'service.tfstate.json')) };
}

async function workspace(args: Args, env: NodeJS.ProcessEnv): Promise<Workspace> {
  const { folder, statePath } = folderAndState(args);
  const variables = new Map<string, string>();
  for (const [key, value] of Object.entries(env)) if (key.startsWith('TF_VAR_') && value !== undefined) variables.set(key.slice(7), value);
  for (const item of args.list('var')) {
    const at = item.indexOf('=');
    if (at <= 0) throw usage(`--var takes NAME=VALUE, got "${item}"`);
    variables.set(item.slice(0, at), item.slice(at + 1));
  }
  const config = await loadConfiguration(folder);
  // TF_VAR_ values for variables this folder does not declare are ignored, as Terraform does; --var ones are errors
  for (const name of [...variables.keys()])
    if (!config.variables.has(name) && !args.list('var').some((item) => item.startsWith(`${name}=`))) variables.delete(name);
  const replace = new Set(args.list('replace'));
  return { folder, statePath, input: { config, variables, replace } };
}

/** plan then (for apply/destroy) carry it out, under the state lock */
async function planAndMaybeApply({ args, api, output, env }: CommandContext, mode: 'plan' | 'apply' | 'destroy'): Promise<void> {
  const { statePath, input } = await workspace(args, env);
  const client: ApiClient = api();
  const unlock = mode === 'plan' ? () => undefined : lockState(statePath);
  try {
    const state = readState(statePath, client.env.apiUrl);
    let plan: Plan;
    if (mode === 'destroy') {
      const { refreshed, drift } = await refresh(client, state);
      const deletes = Object.entries(refreshed).map(([address, prior]) => ({
        address,
        kind: RESOURCE_KINDS.get(prior.kind) ?? kindOf({ address, kind: prior.kind, name: '', body: {}, dependsOn: [] }),
        action: 'delete' as const,
        changes: [],
        forcedBy: [],
        block: null,
        prior,
      }));
      plan = { changes: deletionOrder(deletes), drift, refreshed, data: new Map() };
    } else {
      checkOutputs(input.config);
      plan = await makePlan(client, input, state);
    }
    if (mode === 'plan') {
      output.result(planJson(plan), () => renderPlan(plan));
      return;
    }
    output.note(renderPlan(plan));
    const steps = await applyPlan(client, input, plan, state, statePath, (step) =>
      output.note(`${step.address}: ${step.action} done${step.id ? ` (id ${step.id})` : ''}`),
    );
    if (mode === 'destroy') delete state.outputs;
    else state.outputs = evaluateOutputs(input, plan.data, state);
    writeState(statePath, state);
    const outputs = maskedOutputs(state.outputs ?? {});
    const summary = { applied: steps, state: statePath, resources: Object.keys(state.resources).length, outputs };
    output.result(summary, () =>
      [
        `Apply complete: ${steps.length} change(s). State: ${statePath} (${summary.resources} resource(s)).`,
        ...(Object.keys(outputs).length > 0 ? ['', 'Outputs:', ...Object.entries(outputs).map(([name, value]) => `  ${name} = ${canonical(value)}`)] : []),
      ].join('\n'),
    );
  } finally {
    unlock();
  }
}

export const provisionCommands: readonly Command[] = [
  {
    name: 'provision plan',
    summary: 'Show what apply would change (refreshes against the live API, shows drift)',
    usage: [PLAN_USAGE],
    options: PLAN_OPTIONS,
    run: (context) => planAndMaybeApply(context, 'plan'),
  },
  {
    name: 'provision apply',
    summary: 'Create, update, replace and delete resources to match the .tf files',
    usage: [PLAN_USAGE],
    options: PLAN_OPTIONS,
    run: (context) => planAndMaybeApply(context, 'apply'),
  },
  {
    name: 'provision destroy',
    summary: 'Delete every resource in the state',
    usage: [FOLDER_USAGE],
    options: FOLDER_OPTIONS,
    run: (context) => planAndMaybeApply(context, 'destroy'),
  },
  {
    name: 'provision import',
    summary: 'Bring an existing object under management: provision import <address> <id>',
    usage: ['<address> <id> ' + FOLDER_USAGE],
    options: FOLDER_OPTIONS,
    positionals: { min: 2, max: 2 },
    run: async ({ args, api, output, env }) => {
      const [address, id] = args.positionals as [string, string];
      const { statePath, input } = await workspace(args, env);
      const block = input.config.resources.find((candidate) => candidate.address === address);
      if (!block) throw usage(`${address} is not declared in the configuration`);
      const kind = kindOf(block);
      const client = api();
      const unlock = lockState(statePath);
      try {
        const state = readState(statePath, client.env.apiUrl);
        if (state.resources[address]) throw usage(`${address} is already in the state (id ${state.resources[address].id})`);
        const live = await kind.read(client, id);
        if (live === null) throw usage(`${kind.name} ${id} does not exist`);
        state.resources[address] = { kind: kind.name, id: typeof live['id'] === 'string' ? live['id'] : id, attributes: live };
        writeState(statePath, state);
        output.result(
          { address, id: state.resources[address].id },
          () => `Imported ${address} (id ${state.resources[address]?.id ?? id}). Run plan to see how it differs from the configuration.`,
        );
      } finally {
        unlock();
      }
    },
  },
  {
    name: 'provision state',
    summary: 'List the state (provision state list) or show one resource (provision state show <address>)',
    usage: ['list | show <address> [--dir <folder>] [--state <file>]'],
    options: { dir: { type: 'string' }, state: { type: 'string' } },
    positionals: { min: 1, max: 2 },
    offline: true,
    run: async ({ args, output }) => {
      const state = readState(folderAndState(args).statePath, null);
      const [verb, address] = args.positionals;
      if (verb === 'list') {
        const items = Object.entries(state.resources).map(([name, entry]) => ({ address: name, kind: entry.kind, id: entry.id }));
        output.result({ items }, () => items.map((item) => `${item.address}  ${item.id}`).join('\n'));
        return;
      }
      if (verb !== 'show' || address === undefined) throw usage('provision state takes "list" or "show <address>"');
      const entry = state.resources[address];
      if (!entry) throw usage(`${address} is not in the state`);
      const kind = RESOURCE_KINDS.get(entry.kind);
      output.result({ address, ...entry }, () =>
        [
          `# ${address} (${entry.kind})`,
          `id = ${entry.id}`,
          ...Object.entries(entry.attributes)
            .filter(([name]) => name !== 'id')
            .map(([name, value]) => `${name} = ${shown(kind?.attributes[name], value)}`),
        ].join('\n'),
      );
    },
  },
  {
    name: 'provision output',
    summary: 'The outputs of the last apply (provision output), or one in clear, sensitive or not (provision output <name>)',
    usage: ['[<name>] [--dir <folder>] [--state <file>]'],
    options: { dir: { type: 'string' }, state: { type: 'string' } },
    positionals: { min: 0, max: 1 },
    offline: true,
    run: async ({ args, output }) => {
      const state = readState(folderAndState(args).statePath, null);
      const outputs = state.outputs ?? {};
      const [name] = args.positionals;
      if (name === undefined) {
        const masked = maskedOutputs(outputs);
        output.result({ outputs: masked }, () =>
          Object.entries(masked)
            .map(([key, value]) => `${key} = ${canonical(value)}`)
            .join('\n'),
        );
        return;
      }
      const found = outputs[name];
      if (!found) throw usage(`no output "${name}" in the state (outputs: ${Object.keys(outputs).join(', ') || 'none'}; apply first)`);
      // by name it is shown in clear, as `terraform output NAME` does: a script reads it (`$(service-proxy-cli provision output secret)`)
      output.result({ name, ...found }, () => (typeof found.value === 'string' ? found.value : canonical(found.value)));
    },
  },
  {
    name: 'provision docs',
    summary: 'Print the reference of every resource kind and data source (Markdown), generated from their schemas',
    usage: [''],
    options: {},
    offline: true,
    run: async ({ output }) => output.result({ markdown: kindsMarkdown() }, () => kindsMarkdown()),
  },
];
