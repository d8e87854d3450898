/**
 * `service_policy`: a Rego policy (`/policies`, feature `policies`). The API
 * fixes name and package path at creation, so changing them replaces the
 * policy. Inline Rego is validated against `POST /policies/policies/validate`
 * at plan time.
 */
import { usage } from '../../errors.js';
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

const FIELDS = ['name', 'package_path', 'rego_code', 'rego_file', 'enabled'] as const;
type PolicyView = { id: string } & Record<(typeof FIELDS)[number], Value>;
const state = (view: PolicyView): Attributes => ({ id: view.id, ...pick(view, FIELDS) });

const body = (desired: Attributes, names: readonly string[]): Record<string, Value> =>
  Object.fromEntries(names.filter((name) => desired[name] !== null && desired[name] !== undefined).map((name) => [name, desired[name] as Value]));

export const policyKind: ResourceKind = {
  name: 'service_policy',
  description: 'A Rego policy over tool calls (feature `policies`). Exactly one of `rego_code` and `rego_file`; inline Rego is validated at plan time.',
  attributes: {
    name: { type: 'string', required: true, immutable: true, description: 'a Rego identifier (lowercase a-z, 0-9, `_`)' },
    package_path: { type: 'string', optional: true, computed: true, immutable: true, description: 'the Rego package (server default `service.<name>`)' },
    rego_code: { type: 'string', optional: true, description: 'the Rego source, inline' },
    rego_file: { type: 'string', optional: true, description: '`<policy source name>/<path>` of a module, instead of `rego_code`' },
    enabled: { type: 'bool', optional: true, default: true, description: 'a disabled policy is not in the bundle' },
  },
  create: async (api, desired) => state(await api.json<PolicyView>('POST', '/policies', { body: body(desired, FIELDS) })),
  read: async (api, id) => {
    const view = await readOrNull<PolicyView>(api, itemPath('/policies', id));
    return view && state(view);
  },
  update: async (api, id, desired) =>
    state(await api.json<PolicyView>('PATCH', itemPath('/policies', id), { body: body(desired, ['rego_code', 'rego_file', 'enabled']) })),
  delete: (api, id) => deleteIfPresent(api, itemPath('/policies', id)),
  validate: async (api, desired) => {
    const code = desired['rego_code'];
    if (typeof code !== 'string') return;
    const { valid, errors } = await api.json<{ valid: boolean; errors: { line: number; column: number; message: string }[] }>(
      'POST',
      '/policies/policies/validate',
      { body: { rego_code: code } },
    );
    if (!valid) {
      throw usage(
        `policy ${JSON.stringify(desired['name'] ?? null)}: rego_code does not compile: ${errors.map((error) => `${error.line}:${error.column}: ${error.message}`).join('; ')}`,
      );
    }
  },
};
