/**
 * /pipeline-agent: what the executor of a pipeline run reports (log lines,
 * progress) and reads (status), and the agent runs it starts inside its run
 * (`/pipeline-agent/runs`: their steps show in the run's log). A
 * pipeline-scoped token reports to its own run and sees only its own agent
 * runs (another run's: 404); a login token may report to any run of its
 * organization by naming `run_id`, given `pipeline:manage`.
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import { ServiceError } from '../../runtime/errors.js';
import { LOG_LEVELS } from '../../domains/pipelines/runs.js';
import { decimalInteger } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import { liveStream, storedStream } from '../sse.js';
import type { PipelineAgentRunView } from '../../domains/pipelines/agent-runs.js';
import type { Services } from '../services.js';
import { entrySchema, presentEntry, presentRun, runSchema } from './pipeline-present.js';

const PHASE = z.string().min(1).max(100);
const RUN_ID = z.string().min(1).max(100);
const MESSAGE = z.string().max(16_384);

const logBody = z.strictObject({ message: MESSAGE.min(1), level: z.enum(LOG_LEVELS).default('info'), phase: PHASE.nullish(), run_id: RUN_ID.optional() });
const progressBody = z.strictObject({
  fraction: z.number().min(0, { message: 'fraction is between 0.0 and 1.0' }).max(1, { message: 'fraction is between 0.0 and 1.0' }),
  message: MESSAGE.nullish(),
  phase: PHASE.nullish(),
  run_id: RUN_ID.optional(),
});
const entryResponse = z.object({ run_id: z.string(), seq: z.number().int() });

const agentRunStart = z.strictObject({
  instruction: MESSAGE.min(1),
  agent: z.string().min(1).max(100).optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  /** answer once the run ended (at most two minutes; it goes on after that) */
  wait: z.boolean().default(false),
  run_id: RUN_ID.optional(),
});
const agentRunParams = z.object({ agent_run_id: RUN_ID });
const agentRunSchema = z.object({
  id: z.string(),
  pipeline_run_id: z.string(),
  pipeline_id: z.string(),
  status: z.enum(['starting', 'pending', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled']),
  reason: z.string().nullable(),
  error: z.string().nullable(),
  instruction: z.string(),
  agent: z.string().nullable(),
  inputs: z.record(z.string(), z.unknown()),
  output: z.string().nullable(),
  cost_usd: z.number(),
  turns: z.number().int(),
  created_by: z.string(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

const presentAgentRun = ({ record, run }: PipelineAgentRunView) => ({
  id: record.id,
  pipeline_run_id: record.pipeline_run_id,
  pipeline_id: record.pipeline_id,
  status: run?.status ?? 'starting',
  reason: run?.reason ?? null,
  error: run?.error_message ?? null,
  instruction: record.instruction,
  agent: record.agent,
  inputs: record.inputs,
  output: record.output,
  cost_usd: run?.cost_usd ?? 0,
  turns: run?.turns ?? 0,
  created_by: record.created_by,
  created_at: record.created_at,
  finished_at: run?.finished_at ?? null,
});

/** the pipeline run whose agent runs this caller sees: its token's, or (a login token with `permission`) any of the organization (null) */
function agentRunScope(auth: AuthContext, permission: 'pipeline:read' | 'pipeline:manage'): string | null {
  if (auth.pipelineRunId !== undefined) return auth.pipelineRunId;
  if (!auth.permissions.has(permission)) {
    throw new ServiceError('forbidden', `this action needs the permission "${permission}"`, { permission });
  }
  return null;
}

/** The run this caller reports to; thrown when it names none or one it may not touch. */
function reportingRun(auth: AuthContext, named: string | undefined): string {
  if (auth.pipelineRunId !== undefined) {
    if (named !== undefined && named !== auth.pipelineRunId) {
      throw new ServiceError('forbidden', 'a pipeline token reports only to its own run', { run_id: auth.pipelineRunId });
    }
    return auth.pipelineRunId;
  }
  if (named === undefined) {
    throw new ServiceError('validation_error', 'a login token must name the run: give run_id (the CLI reads PIPELINE_RUN_ID)', { field: 'run_id' });
  }
  if (!auth.permissions.has('pipeline:manage')) {
    throw new ServiceError('forbidden', 'this action needs the permission "pipeline:manage"', { permission: 'pipeline:manage' });
  }
  return named;
}

export function pipelineAgentRoutes({ pipelineRuns, pipelineAgent }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/pipeline-agent/runs',
      tag: 'pipeline-agent',
      auth: 'bearer',
      status: 201,
      creates: true,
      summary: 'Start an agent run inside the pipeline run (its steps and progress show in the run); `wait`: answer once it ended',
      body: agentRunStart,
      response: agentRunSchema,
      errors: [403, 404, 409],
      handler: async ({ auth, body }) => {
        const runId = reportingRun(auth, body.run_id);
        // a pipeline token carries no source permission: its agent sees no connector source (least privilege), a login token its own
        const caller = { userId: auth.userId, sourceIds: auth.permissions.has('source:read') ? auth.sourceIds : [] };
        const request = { instruction: body.instruction, agent: body.agent, inputs: body.inputs };
        return { status: 201, json: presentAgentRun(await pipelineAgent.start(auth.orgId, runId, caller, request, body.wait)) };
      },
    }),
    route({
      method: 'GET',
      path: '/pipeline-agent/runs/:agent_run_id',
      tag: 'pipeline-agent',
      auth: 'bearer',
      summary: 'An agent run of the pipeline run: status, output, cost',
      params: agentRunParams,
      response: agentRunSchema,
      errors: [403],
      handler: async ({ auth, params }) => ({
        status: 200,
        json: presentAgentRun(await pipelineAgent.get(auth.orgId, params.agent_run_id, agentRunScope(auth, 'pipeline:read'))),
      }),
    }),
    route({
      method: 'GET',
      path: '/pipeline-agent/runs/:agent_run_id/events',
      tag: 'pipeline-agent',
      auth: 'bearer',
      summary: 'Server-Sent Events of an agent run: live while it runs, a finished run replays its events and closes',
      params: agentRunParams,
      query: z.object({ last_event_id: decimalInteger('last_event_id', 0, Number.MAX_SAFE_INTEGER).optional() }),
      errors: [403],
      handler: async ({ auth, params, query, request }) => {
        const { record } = await pipelineAgent.get(auth.orgId, params.agent_run_id, agentRunScope(auth, 'pipeline:read'));
        const header = request.headers['last-event-id']?.trim();
        let after = query.last_event_id ?? 0;
        if (header !== undefined && header !== '') {
          if (!/^\d+$/.test(header)) throw new ServiceError('validation_error', 'invalid header: Last-Event-ID must be an event id (an integer)');
          after = Number(header);
        }
        const feed = pipelineAgent.feed(record.id);
        if (feed) return liveStream(feed, after, { 'x-run-id': record.id });
        return storedStream(await pipelineAgent.events(auth.orgId, record.id), after);
      },
    }),
    route({
      method: 'POST',
      path: '/pipeline-agent/runs/:agent_run_id/cancel',
      tag: 'pipeline-agent',
      auth: 'bearer',
      status: 202,
      summary: 'Cancel an agent run of the pipeline run: it stops after its current step',
      params: agentRunParams,
      response: z.object({ agent_run_id: z.string(), status: z.enum(['cancelling', 'ended']) }),
      errors: [403],
      handler: async ({ auth, params }) => {
        const { record } = await pipelineAgent.get(auth.orgId, params.agent_run_id, agentRunScope(auth, 'pipeline:manage'));
        return { status: 202, json: { agent_run_id: record.id, status: pipelineAgent.cancel(auth.orgId, record.id) } };
      },
    }),
    route({
      method: 'POST',
      path: '/pipeline-agent/runs/:agent_run_id/approvals/:approval_id',
      tag: 'pipeline-agent',
      auth: 'bearer',
      audit: { action: 'decide' },
      summary: 'Answer an approval the agent run asked for (a write tool): approved, the tool runs; denied, the model is told',
      params: agentRunParams.extend({ approval_id: z.string().min(1).max(100) }),
      body: z.strictObject({ approved: z.boolean({ message: 'approved must be true or false' }) }),
      response: z.object({ approval_id: z.string(), approved: z.boolean(), decision: z.enum(['approved', 'denied']) }),
      errors: [403, 409],
      handler: async ({ auth, params, body }) => {
        const scope = agentRunScope(auth, 'pipeline:manage');
        const answer = { approvalId: params.approval_id, approved: body.approved, userId: auth.userId };
        return { status: 200, json: await pipelineAgent.answerApproval(auth.orgId, params.agent_run_id, scope, answer) };
      },
    }),
    route({
      method: 'POST',
      path: '/pipeline-agent/log',
      tag: 'pipeline-agent',
      auth: 'bearer',
      status: 201,
      audit: false,
      summary: 'Append a log line to the pipeline run',
      body: logBody,
      response: entryResponse,
      handler: async ({ auth, body }) => {
        const runId = reportingRun(auth, body.run_id);
        const entry = await pipelineRuns.report(auth.orgId, runId, { kind: 'log', level: body.level, message: body.message, phase: body.phase ?? null });
        return { status: 201, json: { run_id: runId, seq: entry.seq } };
      },
    }),
    route({
      method: 'POST',
      path: '/pipeline-agent/progress',
      tag: 'pipeline-agent',
      auth: 'bearer',
      status: 201,
      audit: false,
      summary: 'Report progress (a fraction from 0.0 to 1.0) of the pipeline run',
      body: progressBody,
      response: entryResponse,
      handler: async ({ auth, body }) => {
        const runId = reportingRun(auth, body.run_id);
        const entry = await pipelineRuns.report(auth.orgId, runId, {
          kind: 'progress',
          fraction: body.fraction,
          message: body.message ?? null,
          phase: body.phase ?? null,
        });
        return { status: 201, json: { run_id: runId, seq: entry.seq } };
      },
    }),
    route({
      method: 'GET',
      path: '/pipeline-agent/status',
      tag: 'pipeline-agent',
      auth: 'bearer',
      summary: 'Who the token is and, for a pipeline token, its run with the latest entry',
      query: z.object({ run_id: RUN_ID.optional() }),
      errors: [403],
      response: z.object({
        connected: z.literal(true),
        organization_id: z.string(),
        token_kind: z.string(),
        permissions: z.array(z.string()),
        run: runSchema.extend({ last_entry: entrySchema.nullable() }).nullable(),
      }),
      handler: async ({ auth, query }) => {
        const runId = auth.pipelineRunId ?? query.run_id;
        if (auth.pipelineRunId === undefined && runId !== undefined && !auth.permissions.has('pipeline:read')) {
          throw new ServiceError('forbidden', 'this action needs the permission "pipeline:read"', { permission: 'pipeline:read' });
        }
        const run = runId === undefined ? null : await pipelineRuns.get(auth.orgId, runId);
        const [last] = run === null || run.log_count === 0 ? [] : await pipelineRuns.entries(auth.orgId, run.id, run.log_count - 1, 1);
        return {
          status: 200,
          json: {
            connected: true,
            organization_id: auth.orgId,
            token_kind: auth.kind,
            permissions: [...auth.permissions].sort(),
            run: run === null ? null : { ...presentRun(run), last_entry: last === undefined ? null : presentEntry(last) },
          },
        };
      },
    }),
  ];
}
