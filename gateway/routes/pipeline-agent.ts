/**
 * /pipeline-agent: what the executor of a pipeline run reports (log lines,
 * progress) and reads (status). A pipeline-scoped token reports to its own
 * run; a login token may report to any run of its organization by naming
 * `run_id`, given `pipeline:manage`.
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import { ServiceError } from '../../runtime/errors.js';
import { LOG_LEVELS } from '../../domains/pipelines/runs.js';
import { route, type AnyRoute } from '../route.js';
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

export function pipelineAgentRoutes({ pipelineRuns }: Services): AnyRoute[] {
  return [
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
