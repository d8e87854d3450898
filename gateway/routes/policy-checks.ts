/**
 * Checking policies before they bite (feature `policies`): replay the decision
 * log against proposed policies (`POST /policies/simulate`), and run a
 * policy's `test_*` rules like `opa test` (`POST /policies/:id/test`:
 * beside `/policies/policies/validate`, since `/policies/:id/test` and
 * `/policies/sources/:id` would be ambiguous paths).
 */
import { z } from 'zod';
import { SIMULATE_MAX_DECISIONS } from '../../domains/policies/simulate.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const simulateBody = z.strictObject({
  policies: z
    .array(
      z.strictObject({
        name: z
          .string()
          .regex(/^[a-z_][a-z0-9_]*$/)
          .max(100),
        rego: z.string().min(1).max(262_144),
      }),
    )
    .max(50)
    .default([])
    .describe('proposed policies: each replaces the enabled or disabled policy of that name, or is added; package service.<name>'),
  days: z.number().int().min(1).max(90).default(7).describe('replay the decisions of the last N days'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(SIMULATE_MAX_DECISIONS)
    .default(SIMULATE_MAX_DECISIONS)
    .describe(`replay at most this many decisions, oldest first (at most ${SIMULATE_MAX_DECISIONS})`),
});
const outcome = z.enum(['allow', 'deny']);
const simulateResponse = z.object({
  evaluated: z.number(),
  changed: z.array(
    z.object({
      decision_id: z.string(),
      tool: z.string(),
      at: z.string(),
      before: outcome.describe('the recorded decision'),
      after: outcome,
      messages: z.array(z.string()),
    }),
  ),
  unchanged_count: z.number(),
  max_decisions: z.number().describe('the cap of decisions one simulation replays'),
  truncated: z.boolean().describe('the window held more decisions than were replayed'),
  revision: z.string().describe("the proposed bundle's revision"),
});
const testResponse = z.object({
  passed: z.number(),
  failed: z.number().describe('tests that failed or errored'),
  results: z.array(z.object({ name: z.string(), result: z.enum(['pass', 'fail', 'error']), message: z.string().optional(), duration_ms: z.number() })),
});

export function policyCheckRoutes({ policyService }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/policies/simulate',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      summary:
        'Replay the recorded tool-call decisions of the last N days against proposed policies and list the calls whose outcome would change ' +
        `(before: the recorded result; inputs as logged, secrets masked; at most ${SIMULATE_MAX_DECISIONS} decisions)`,
      body: simulateBody,
      response: simulateResponse,
      errors: [422],
      handler: async ({ auth, body }) => ({ status: 200, json: await policyService.simulate(auth.orgId, body) }),
    }),
    route({
      method: 'POST',
      path: '/policies/:id/test',
      tag: 'policies',
      auth: 'bearer',
      permission: 'policy:read',
      feature: 'policies',
      summary: "Run the test_* rules of the policy's package (like opa test) with the organization's bundle; by id or name",
      params: idParams,
      response: testResponse,
      errors: [422],
      handler: async ({ auth, params }) => ({ status: 200, json: await policyService.test(auth.orgId, params.id) }),
    }),
  ];
}
