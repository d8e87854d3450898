/**
 * /policies (feature `policies`): Rego policies of the organization, compiled
 * at save; validate a source; evaluate a query OPA-style with the enabled
 * policies plus inline modules; the decision log of tool-call decisions.
 */
import { z } from 'zod';
import type { PolicyDecisionDoc, PolicyDoc } from '../../domains/policies/documents.js';
import { ERROR_CATALOG, ServiceError, type ErrorCode } from '../../runtime/errors.js';
import { moduleNameOf, packagePathOf } from '../../domains/policies/bundles.js';
import { compile, RegoError, validate, type ModuleSource } from '../../runtime/policy/index.js';
import type { OrgId } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** a Rego identifier, so `service.<name>` is a plain package path */
const POLICY_NAME = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z_][a-z0-9_]*$/, { message: 'policy name uses lowercase a-z, 0-9 and "_", not starting with a digit' });
/** 256 KiB of Rego per policy */
const REGO_SOURCE = z.string().min(1).max(262_144);
const REGO_FILE = z.string().min(1).max(1024);
const REGO_FILE_HELP = '`<policy source name>/<path>`: a module of that policy source (its last good sync, or its inline modules); '
  + 'when no policy source has that name, a path in the organization\'s files. Read at save (422 rego_file_unresolved when it does not resolve) and whenever the bundle is built';

const policyCreate = z.strictObject({
  name: POLICY_NAME,
  package_path: z.string().max(200).optional(),
  rego_code: REGO_SOURCE.optional(),
  rego_file: REGO_FILE.optional().describe(REGO_FILE_HELP),
  enabled: z.boolean().default(true),
});
const policyPatch = z.strictObject({
  name: z.string().optional(),
  package_path: z.string().optional(),
  rego_code: REGO_SOURCE.optional(),
  rego_file: REGO_FILE.optional(),
  enabled: z.boolean().optional(),
});

const sourceError = z.object({ line: z.number(), column: z.number(), message: z.string() });

const policySchema = z.object({
  ...storedSchema,
  name: z.string(),
  package_path: z.string(),
  rego_code: z.string().nullable(),
  rego_file: z.string().nullable().describe(REGO_FILE_HELP),
  enabled: z.boolean(),
  created_by: z.string(),
});

const decisionSchema = z.object({
  ...storedSchema,
  revision: z.string(),
  input: z.record(z.string(), z.unknown()),
  result: z.enum(['allow', 'deny']),
  messages: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  run_id: z.string().nullable(),
  at: z.string(),
});

const evalBody = z.strictObject({
  query: z.string().min(1).max(65_536),
  input: z.unknown().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  modules: z.array(z.strictObject({ name: z.string().min(1).max(200).optional(), rego: REGO_SOURCE })).max(50).optional(),
  strict_builtin_errors: z.boolean().optional(),
});

const present = (policy: PolicyDoc) => ({
  id: policy.id,
  name: policy.name,
  package_path: policy.package_path,
  rego_code: policy.rego_code,
  rego_file: policy.rego_file,
  enabled: policy.enabled,
  created_by: policy.created_by,
  created_at: policy.created_at,
  updated_at: policy.updated_at,
});

const presentDecision = (decision: PolicyDecisionDoc) => ({
  id: decision.id,
  revision: decision.revision,
  input: decision.input,
  result: decision.result,
  messages: decision.messages,
  error: decision.error,
  run_id: decision.run_id,
  at: decision.at,
  created_at: decision.created_at,
  updated_at: decision.updated_at,
});

/** a RegoError as the API's error (its code when the catalogue has it) */
export function regoFailure(error: unknown): never {
  if (error instanceof RegoError) {
    const code = (error.code in ERROR_CATALOG ? error.code : 'validation_error') as ErrorCode;
    throw new ServiceError(code, error.message, error.location ? { line: error.location.line, column: error.location.column } : undefined);
  }
  throw error;
}

export function policyRoutes({ collections, policyBundles }: Services): AnyRoute[] {
  const { policies, policyDecisions } = collections;
  const listPage = createPageResponder(policies, present);
  const listDecisions = createPageResponder(policyDecisions, presentDecision);

  /** compiles the policy's source and checks its package (400 validation_error with positions) */
  const checkSource = async (org: OrgId, name: string, source: { rego_code: string | null; rego_file: string | null }): Promise<void> => {
    // 422 rego_file_unresolved when the file is in no synced source and not in the organization's files
    const text = await policyBundles.sourceOf(org, source);
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
  };

  const exactlyOneSource = (code: string | null | undefined, file: string | null | undefined): void => {
    if ((code == null) === (file == null)) {
      throw new ServiceError('validation_error', 'give exactly one of rego_code and rego_file', { fields: ['rego_code', 'rego_file'] });
    }
  };

  return [
    route({
      method: 'GET', path: '/policies', tag: 'policies', summary: 'List policies', auth: 'bearer', permission: 'policy:read', feature: 'policies',
      query: pageQuery, response: pageSchema(policySchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST', path: '/policies', tag: 'policies', summary: 'Create a policy (compiled at save; package service.<name>)', auth: 'bearer',
      permission: 'policy:manage', feature: 'policies', body: policyCreate, response: policySchema, status: 201, creates: true, errors: [422],
      handler: async ({ auth, body }) => {
        exactlyOneSource(body.rego_code, body.rego_file);
        if (body.package_path !== undefined && body.package_path !== packagePathOf(body.name)) {
          throw new ServiceError('validation_error', `package_path must be ${packagePathOf(body.name)}`, { field: 'package_path' });
        }
        const source = { rego_code: body.rego_code ?? null, rego_file: body.rego_file ?? null };
        await checkSource(auth.orgId, body.name, source);
        const policy = await unique('policy', () =>
          policies.insert(auth.orgId, { name: body.name, package_path: packagePathOf(body.name), ...source, enabled: body.enabled, created_by: auth.userId }),
        );
        policyBundles.invalidate(auth.orgId);
        return { status: 201, json: present(policy) };
      },
    }),
    route({
      method: 'POST', path: '/policies/policies/validate', tag: 'policies', summary: 'Validate a Rego source (200 with the errors and their positions)',
      auth: 'bearer', permission: 'policy:read', feature: 'policies',
      body: z.strictObject({ rego_code: REGO_SOURCE }),
      response: z.object({ valid: z.boolean(), errors: z.array(sourceError) }),
      handler: async ({ body }) => {
        const errors = validate(body.rego_code, 'policy.rego').map(({ line, column, message }) => ({ line, column, message }));
        return { status: 200, json: { valid: errors.length === 0, errors } };
      },
    }),
    route({
      method: 'POST', path: '/policies/eval', tag: 'policies', auth: 'bearer', permission: 'policy:read', feature: 'policies',
      summary: 'Evaluate a Rego query (OPA query API) with the enabled policies plus inline modules',
      body: evalBody, response: z.object({ result: z.array(z.record(z.string(), z.unknown())) }),
      handler: async ({ auth, body }) => {
        let modules: readonly ModuleSource[];
        try {
          modules = (await policyBundles.get(auth.orgId)).modules;
        } catch (error) {
          regoFailure(error);
        }
        const inline = (body.modules ?? []).map((module, index) => ({ name: `inline/${module.name ?? `module${index}.rego`}`, source: module.rego }));
        try {
          const bundle = compile([...modules, ...inline]);
          const result = bundle.query(body.query, {
            ...(body.input === undefined ? {} : { input: body.input }),
            ...(body.data === undefined ? {} : { data: body.data }),
            strictBuiltinErrors: body.strict_builtin_errors ?? false,
          });
          return { status: 200, json: { result } };
        } catch (error) {
          regoFailure(error);
        }
      },
    }),
    route({
      method: 'GET', path: '/policies/decisions', tag: 'policies', auth: 'bearer', permission: 'policy:read', feature: 'policies',
      summary: 'The decision log: one entry per policy decision on a tool call (filter by result)',
      query: pageQuery.extend({ result: z.enum(['allow', 'deny']).optional() }), response: pageSchema(decisionSchema),
      handler: async ({ auth, query }) => {
        // the query object itself (not a copy): it carries the request's cursor scope
        const { result } = query;
        return listDecisions(auth.orgId, query, result === undefined ? undefined : { result });
      },
    }),
    route({
      method: 'GET', path: '/policies/:id', tag: 'policies', summary: 'Get a policy by id or name', auth: 'bearer', permission: 'policy:read',
      feature: 'policies', params: idParams, response: policySchema,
      handler: async ({ auth, params }) => {
        const policy = (await policies.get(auth.orgId, params.id)) ?? (await policies.findOne(auth.orgId, { name: params.id }));
        if (!policy) throw new ServiceError('not_found', `policy ${params.id} not found`);
        return { status: 200, json: present(policy) };
      },
    }),
    route({
      method: 'PATCH', path: '/policies/:id', tag: 'policies', summary: 'Update a policy (name and package_path are immutable; recompiled at save)',
      auth: 'bearer', permission: 'policy:manage', feature: 'policies', params: idParams, body: policyPatch, response: policySchema, errors: [422],
      handler: async ({ auth, params, body }) => {
        const policy = await getOr404(policies, auth.orgId, params.id, 'policy');
        rejectImmutable(policy, body, ['name', 'package_path']);
        if (body.rego_code !== undefined && body.rego_file !== undefined) exactlyOneSource(body.rego_code, body.rego_file);
        const source =
          body.rego_code !== undefined ? { rego_code: body.rego_code, rego_file: null }
          : body.rego_file !== undefined ? { rego_code: null, rego_file: body.rego_file }
          : null;
        if (source) await checkSource(auth.orgId, policy.name, source);
        const updated = await policies.update(auth.orgId, policy.id, {
          ...(source ?? {}),
          ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
        });
        if (!updated) throw new ServiceError('not_found', `policy ${params.id} not found`);
        policyBundles.invalidate(auth.orgId);
        return { status: 200, json: present(updated) };
      },
    }),
    route({
      method: 'DELETE', path: '/policies/:id', tag: 'policies', summary: 'Delete a policy', auth: 'bearer', permission: 'policy:manage',
      feature: 'policies', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const policy = await getOr404(policies, auth.orgId, params.id, 'policy');
        await policies.delete(auth.orgId, policy.id);
        policyBundles.invalidate(auth.orgId);
        return { status: 204, json: null };
      },
    }),
  ];
}
