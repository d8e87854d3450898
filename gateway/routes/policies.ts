/**
 * /policies (feature `policies`): Rego policies of the organization, compiled
 * at save; validate a source; evaluate a query OPA-style with the enabled
 * policies plus inline modules; the decision log of tool-call decisions.
 */
import { z } from 'zod';
import type { PolicyDecisionDoc, PolicyDoc } from '../../domains/policies/documents.js';
import { validate } from '../../runtime/policy/index.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
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
const REGO_FILE_HELP =
  '`<policy source name>/<path>`: a module of that policy source (its last good sync, or its inline modules); ' +
  "when no policy source has that name, a path in the organization's files. Read at save (422 rego_file_unresolved when it does not resolve) and whenever the bundle is built";

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
  modules: z
    .array(z.strictObject({ name: z.string().min(1).max(200).optional(), rego: REGO_SOURCE }))
    .max(50)
    .optional(),
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

export function policyRoutes({ policyService }: Services): AnyRoute[] {
  const listPage = createPageResponder(policyService.listing, present);
  const listDecisions = createPageResponder(policyService.decisionListing, presentDecision);
  return [
    route({
      method: 'GET',
      path: '/policies',
      tag: 'policies',
      summary: 'List policies',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      query: pageQuery,
      response: pageSchema(policySchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/policies',
      tag: 'policies',
      summary: 'Create a policy (compiled at save; package service.<name>)',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      body: policyCreate,
      response: policySchema,
      status: 201,
      creates: true,
      errors: [422],
      handler: async ({ auth, body }) => ({ status: 201, json: present(await policyService.create(auth.orgId, auth.userId, body)) }),
    }),
    route({
      method: 'POST',
      path: '/policies/policies/validate',
      tag: 'policies',
      summary: 'Validate a Rego source (200 with the errors and their positions)',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      body: z.strictObject({ rego_code: REGO_SOURCE }),
      response: z.object({ valid: z.boolean(), errors: z.array(sourceError) }),
      handler: async ({ body }) => {
        const errors = validate(body.rego_code, 'policy.rego').map(({ line, column, message }) => ({ line, column, message }));
        return { status: 200, json: { valid: errors.length === 0, errors } };
      },
    }),
    route({
      method: 'POST',
      path: '/policies/eval',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      summary: 'Evaluate a Rego query (OPA query API) with the enabled policies plus inline modules',
      body: evalBody,
      response: z.object({ result: z.array(z.record(z.string(), z.unknown())) }),
      handler: async ({ auth, body }) => ({ status: 200, json: { result: await policyService.evaluate(auth.orgId, body) } }),
    }),
    route({
      method: 'GET',
      path: '/policies/decisions',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      summary: 'The decision log: one entry per policy decision on a tool call (filter by result)',
      query: pageQuery.extend({ result: z.enum(['allow', 'deny']).optional() }),
      response: pageSchema(decisionSchema),
      handler: async ({ auth, query }) => {
        // the query object itself (not a copy): it carries the request's cursor scope
        const { result } = query;
        return listDecisions(auth.orgId, query, result === undefined ? undefined : { result });
      },
    }),
    route({
      method: 'GET',
      path: '/policies/:id',
      tag: 'policies',
      summary: 'Get a policy by id or name',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      params: idParams,
      response: policySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await policyService.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/policies/:id',
      tag: 'policies',
      summary: 'Update a policy (name and package_path are immutable; recompiled at save)',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      params: idParams,
      body: policyPatch,
      response: policySchema,
      errors: [422],
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await policyService.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/policies/:id',
      tag: 'policies',
      summary: 'Delete a policy',
      auth: 'bearer',
      permission: 'policy:manage',
      feature: 'policies',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await policyService.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
