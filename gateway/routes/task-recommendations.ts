/** GET /task-recommendations: suggested tasks from recurring chat questions, connector state and graph patterns (domains/recommendations). */
import { z } from 'zod';
import { decimalInteger } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const recommendationQuery = z.object({
  days: decimalInteger('days', 1, 365).default(30),
  min_occurrences: decimalInteger('min_occurrences', 2, 1000).default(3),
  limit: decimalInteger('limit', 1, 50).default(20),
});

const taskBodySchema = z.object({
  name: z.string(),
  realm: z.string().optional(),
  trigger: z.object({ kind: z.enum(['schedule', 'webhook']), cron: z.string().optional() }),
  input_template: z.object({ instruction: z.string() }),
  enabled_source_ids: z.array(z.string()).optional(),
  approval_defaults: z.object({ write: z.literal('ask') }),
  enabled: z.boolean(),
});
const recommendationsSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['recurring_question', 'weekday_summary', 'failure_diagnosis', 'cluster_health']),
      title: z.string(),
      reason: z.string(),
      evidence: z.record(z.string(), z.unknown()),
      task: taskBodySchema.describe('a body for POST /tasks'),
      try_with_sample: z.string().optional(),
    }),
  ),
  window_days: z.number().int(),
  skipped: z.array(z.object({ signal: z.string(), reason: z.string() })),
});

export function taskRecommendationRoutes({ recommender, clock }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/task-recommendations',
      tag: 'tasks',
      auth: 'bearer',
      permission: 'task:read',
      summary: 'Suggested tasks (each with a body for POST /tasks and its evidence) from recurring chat questions, connector state and graph patterns',
      query: recommendationQuery,
      response: recommendationsSchema,
      handler: async ({ auth, query }) => {
        const recommendations = await recommender.recommend(auth.orgId, {
          now: new Date(clock.now()),
          days: query.days,
          minOccurrences: query.min_occurrences,
          limit: query.limit,
        });
        return { status: 200, json: recommendations };
      },
    }),
  ];
}
