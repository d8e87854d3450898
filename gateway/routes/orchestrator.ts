/** /orchestrator (feature `orchestrator`): workflows of agent, approval and gateway steps, their runs, cancel and approvals. */
import { z } from 'zod';
import type { StepDef, WorkflowDoc, WorkflowRunDoc } from '../../domains/orchestrator/documents.js';
import { MAX_STEPS } from '../../domains/orchestrator/validation.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName, safeText } from '../safe-text.js';
import type { Services } from '../services.js';

const STEP_ID = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, { message: 'a step id is a letter, then letters, digits or "_" (at most 64)' });
const needs = z.array(STEP_ID).max(MAX_STEPS).default([]);
const when = z.strictObject({
  step: STEP_ID,
  path: z.string().max(500).optional(),
  equals: z.unknown().optional(),
  contains: z.string().max(1000).optional(),
  matches: z.string().max(200).optional(),
});
const agentStep = z.strictObject({
  id: STEP_ID,
  kind: z.literal('agent'),
  agent: z.string().min(1).max(200),
  instruction: safeText(z.string().max(20_000)),
  needs,
  when: when.optional(),
  cost_cap_usd: z.number().positive().max(1_000_000).nullish(),
});
const approvalStep = z.strictObject({ id: STEP_ID, kind: z.literal('approval'), message: safeText(z.string().max(5000)), needs, when: when.optional() });
const gatewayStep = z.strictObject({
  id: STEP_ID,
  kind: z.literal('gateway'),
  gateway: z.string().min(1).max(200).nullable().default(null),
  input: z.record(z.string(), z.unknown()).default({}),
  needs,
  when: when.optional(),
});
const step = z.discriminatedUnion('kind', [agentStep, approvalStep, gatewayStep], { message: 'a step has kind agent, approval or gateway' });
const steps = z
  .array(step)
  .min(1, { message: 'a workflow has at least one step' })
  .max(MAX_STEPS, { message: `a workflow has at most ${MAX_STEPS} steps` });

const fields = {
  name: safeName(z.string().min(1).max(200)),
  description: safeText(z.string().max(2000)).nullish(),
  steps,
  cost_cap_usd: z.number().positive().max(1_000_000).nullish(),
};
const workflowCreate = z.strictObject(fields);
const workflowPatch = z.strictObject({
  name: fields.name.optional(),
  description: fields.description,
  steps: steps.optional(),
  cost_cap_usd: fields.cost_cap_usd,
});

const stepSchema = z.object({
  id: z.string(),
  kind: z.enum(['agent', 'approval', 'gateway']),
  needs: z.array(z.string()),
  agent: z.string().optional(),
  instruction: z.string().optional(),
  message: z.string().optional(),
  gateway: z.string().nullable().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  when: z.record(z.string(), z.unknown()).optional(),
  cost_cap_usd: z.number().nullable().optional(),
});
const workflowSchema = z.object({
  ...storedSchema,
  name: z.string(),
  description: z.string().nullable(),
  steps: z.array(stepSchema),
  cost_cap_usd: z.number().nullable(),
  created_by: z.string(),
});

const stepStateSchema = z.object({
  id: z.string(),
  kind: z.enum(['agent', 'approval', 'gateway']),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped', 'cancelled', 'waiting_approval']),
  agent_run_id: z.string().nullable(),
  output: z.unknown(),
  cost_usd: z.number(),
  reason: z.string().nullable(),
  error: z.string().nullable(),
  attempts: z.number().int(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  decided_by: z.string().nullable(),
  comment: z.string().nullable(),
});
const runSchema = z.object({
  ...storedSchema,
  workflow_id: z.string(),
  status: z.enum(['running', 'waiting_approval', 'succeeded', 'failed', 'cancelled']),
  reason: z.string().nullable(),
  error_message: z.string().nullable(),
  inputs: z.record(z.string(), z.unknown()),
  steps: z.array(stepStateSchema),
  cost_usd: z.number(),
  cost_cap_usd: z.number().nullable(),
  created_by: z.string(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});

const presentStep = (def: StepDef) => ({ ...def, needs: [...def.needs] });

const present = (workflow: WorkflowDoc) => ({
  id: workflow.id,
  name: workflow.name,
  description: workflow.description,
  steps: workflow.steps.map(presentStep),
  cost_cap_usd: workflow.cost_cap_usd,
  created_by: workflow.created_by,
  created_at: workflow.created_at,
  updated_at: workflow.updated_at,
});

const presentRun = (run: WorkflowRunDoc) => ({
  id: run.id,
  workflow_id: run.workflow_id,
  status: run.status,
  reason: run.reason,
  error_message: run.error_message,
  inputs: run.inputs,
  steps: run.steps.map((state) => ({ ...state, output: state.output ?? null })),
  cost_usd: run.cost_usd,
  cost_cap_usd: run.definition.cost_cap_usd,
  created_by: run.created_by,
  started_at: run.started_at,
  finished_at: run.finished_at,
  created_at: run.created_at,
  updated_at: run.updated_at,
});

const runParams = z.object({ id: z.string().min(1).max(100), run_id: z.string().min(1).max(100) });
const approvalParams = runParams.extend({ step_id: z.string().min(1).max(64) });
const runBody = z.strictObject({ inputs: z.record(z.string(), z.unknown()).default({}) });
const decisionBody = z.strictObject({ approved: z.boolean(), comment: safeText(z.string().max(2000)).nullish() });

export function orchestratorRoutes({ orchestrator }: Services): AnyRoute[] {
  const listPage = createPageResponder(orchestrator.listing, present);
  const listRuns = createPageResponder(orchestrator.runListing, presentRun);
  return [
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'GET',
      path: '/orchestrator/workflows',
      summary: 'List workflows',
      permission: 'workflow:read',
      query: pageQuery,
      response: pageSchema(workflowSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'POST',
      path: '/orchestrator/workflows',
      summary: 'Create a workflow: a named graph of agent, approval and gateway steps (no cycles, at most 100 steps)',
      permission: 'workflow:manage',
      body: workflowCreate,
      response: workflowSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await orchestrator.create(auth.orgId, auth.userId, body)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'GET',
      path: '/orchestrator/workflows/:id',
      summary: 'Get a workflow by id or name',
      permission: 'workflow:read',
      params: idParams,
      response: workflowSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await orchestrator.get(auth.orgId, params.id)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'PATCH',
      path: '/orchestrator/workflows/:id',
      summary: 'Change some fields of a workflow (runs already started keep their definition)',
      permission: 'workflow:manage',
      params: idParams,
      body: workflowPatch,
      response: workflowSchema,
      errors: [409],
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await orchestrator.update(auth.orgId, params.id, body)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'PUT',
      path: '/orchestrator/workflows/:id',
      summary: 'Replace a workflow (absent optional fields are cleared)',
      permission: 'workflow:manage',
      params: idParams,
      body: workflowCreate,
      response: workflowSchema,
      errors: [409],
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: present(
          await orchestrator.update(auth.orgId, params.id, { ...body, description: body.description ?? null, cost_cap_usd: body.cost_cap_usd ?? null }),
        ),
      }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'DELETE',
      path: '/orchestrator/workflows/:id',
      summary: 'Delete a workflow and its finished runs (409 while a run is in flight)',
      permission: 'workflow:manage',
      params: idParams,
      status: 204,
      errors: [409],
      handler: async ({ auth, params }) => {
        await orchestrator.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'POST',
      path: '/orchestrator/workflows/:id/run',
      summary: 'Start a run of the workflow with `inputs` (templates read them as `inputs.<name>`)',
      permission: 'workflow:manage',
      params: idParams,
      body: runBody,
      response: runSchema,
      status: 202,
      errors: [503],
      handler: async ({ auth, params, body }) => ({ status: 202, json: presentRun(await orchestrator.run(auth.orgId, auth.userId, params.id, body.inputs)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'GET',
      path: '/orchestrator/workflows/:id/runs',
      summary: "The workflow's runs, oldest first, with each step's status, output, cost and agent run",
      permission: 'workflow:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(runSchema),
      handler: async ({ auth, params, query }) => {
        const workflow = await orchestrator.get(auth.orgId, params.id);
        return listRuns(auth.orgId, query, { workflow_id: workflow.id });
      },
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'GET',
      path: '/orchestrator/workflows/:id/runs/:run_id',
      summary: 'One run with its step states',
      permission: 'workflow:read',
      params: runParams,
      response: runSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: presentRun(await orchestrator.getRun(auth.orgId, params.id, params.run_id)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'POST',
      path: '/orchestrator/workflows/:id/runs/:run_id/cancel',
      summary: "Cancel a run in flight: its running steps' agent runs are cancelled, the rest marked cancelled",
      permission: 'workflow:manage',
      params: runParams,
      response: runSchema,
      errors: [409, 503],
      handler: async ({ auth, params }) => ({ status: 200, json: presentRun(await orchestrator.cancel(auth.orgId, params.id, params.run_id, auth.userId)) }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'POST',
      path: '/orchestrator/workflows/:id/runs/:run_id/approvals/:step_id',
      summary: 'Approve or deny an approval step waiting for it (a denial fails the run)',
      permission: 'workflow:manage',
      params: approvalParams,
      body: decisionBody,
      response: runSchema,
      errors: [409, 503],
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: presentRun(
          await orchestrator.decide(auth.orgId, params.id, params.run_id, params.step_id, {
            approved: body.approved,
            comment: body.comment ?? null,
            userId: auth.userId,
          }),
        ),
      }),
    }),
    route({
      tag: 'orchestrator',
      auth: 'bearer',
      feature: 'orchestrator',
      method: 'POST',
      path: '/orchestrator/workflows/:id/runs/:run_id/steps/:step_id/approvals/:approval_id',
      audit: { action: 'decide' },
      summary: "Answer an approval an agent step's run asked for (a write tool): approved, the tool runs; denied, the model is told",
      permission: 'workflow:manage',
      params: approvalParams.extend({ approval_id: z.string().min(1).max(100) }),
      body: z.strictObject({ approved: z.boolean({ message: 'approved must be true or false' }) }),
      response: z.object({ approval_id: z.string(), approved: z.boolean(), decision: z.enum(['approved', 'denied']) }),
      errors: [409],
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: await orchestrator.answerStepApproval(auth.orgId, params.id, params.run_id, params.step_id, {
          approvalId: params.approval_id,
          approved: body.approved,
          userId: auth.userId,
        }),
      }),
    }),
  ];
}
