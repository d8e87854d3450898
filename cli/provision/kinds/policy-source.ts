/**
 * `service_policy_source`: where Rego modules come from besides the policies
 * (`/policies/sources`, feature `policies`): a git repository (synced by the
 * API's sync operation, not by the engine) or inline `modules`. The ssh key
 * is write-only on the API and kept in state (sensitive).
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, readOrNull } from './rest.js';

type PolicySourceView = {
  id: string;
  name: string;
  source_type: 'git_repo' | 'inline';
  git_url: string | null;
  git_branch: string;
  git_path: string;
  modules: { path: string; rego: string }[];
  enabled: boolean;
};

const state = (view: PolicySourceView, sshKey: Value): Attributes => ({
  id: view.id,
  name: view.name,
  source_type: view.source_type,
  git_url: view.git_url,
  git_branch: view.git_branch,
  git_path: view.git_path,
  git_ssh_key: sshKey,
  // a git source's modules are its last sync's, not configuration
  modules: view.source_type === 'inline' ? Object.fromEntries(view.modules.map((module) => [module.path, module.rego])) : null,
  enabled: view.enabled,
});

/** what a source of the desired type accepts (the API refuses git fields on inline sources and modules on git ones) */
const body = (desired: Attributes, creating: boolean): Record<string, Value> => {
  const out: Record<string, Value> = { enabled: desired['enabled'] ?? true };
  if (creating) Object.assign(out, { name: desired['name'] ?? null, source_type: desired['source_type'] ?? null });
  if (desired['source_type'] === 'inline') {
    const modules = desired['modules'];
    if (modules !== null && modules !== undefined && typeof modules === 'object') {
      out['modules'] = Object.entries(modules).map(([path, rego]) => ({ path, rego }));
    }
    return out;
  }
  for (const name of ['git_url', 'git_branch', 'git_path']) if (desired[name] !== null && desired[name] !== undefined) out[name] = desired[name];
  if (desired['git_ssh_key'] !== null) out['git_ssh_key'] = desired['git_ssh_key'] ?? null;
  else if (!creating) out['git_ssh_key'] = null;
  return out;
};

export const policySourceKind: ResourceKind = {
  name: 'service_policy_source',
  description:
    'A policy source (feature `policies`): a git repository of Rego modules (synced through the API) or inline `modules`. A policy names one of its modules as `rego_file = "<name>/<path>"`.',
  attributes: {
    name: { type: 'string', required: true, immutable: true, description: 'letters, digits, `.`, `_` and `-`' },
    source_type: { type: 'string', required: true, immutable: true, description: '`git_repo` or `inline`' },
    git_url: { type: 'string', optional: true, description: 'https or ssh URL of the repository (`git_repo`)' },
    git_branch: { type: 'string', optional: true, default: 'main', description: 'the branch synced (`git_repo`)' },
    git_path: { type: 'string', optional: true, default: '', description: 'folder whose `*.rego` files are loaded; empty: the root (`git_repo`)' },
    git_ssh_key: { type: 'string', optional: true, sensitive: true, description: 'private key for ssh remotes (write-only on the API, kept in state)' },
    modules: { type: 'map_string', optional: true, description: 'the modules of an `inline` source: Rego source by relative path (`lib/tools.rego`)' },
    enabled: { type: 'bool', optional: true, default: true, description: "a disabled source's modules leave the bundle" },
  },
  create: async (api, desired) =>
    state(await api.json<PolicySourceView>('POST', '/policies/sources', { body: body(desired, true) }), desired['git_ssh_key'] ?? null),
  read: async (api, id) => {
    const view = await readOrNull<PolicySourceView>(api, itemPath('/policies/sources', id));
    // masked on read: the engine keeps the applied key
    return view && state(view, null);
  },
  update: async (api, id, desired) =>
    state(await api.json<PolicySourceView>('PATCH', itemPath('/policies/sources', id), { body: body(desired, false) }), desired['git_ssh_key'] ?? null),
  delete: (api, id) => deleteIfPresent(api, itemPath('/policies/sources', id)),
};
