/**
 * Policy simulation: the tool calls the decision log recorded in the last N
 * days, decided again by a proposed bundle (the organization's enabled
 * policies and sources with proposed policies replacing same-named ones or
 * added), and which of them would change outcome. Inputs are replayed as
 * logged, i.e. with secret-looking argument values masked.
 */
import { encodeTime } from 'ulid';
import type { Collections } from '../collections.js';
import { RegoError } from '../../runtime/policy/index.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PolicyBundles } from './bundles.js';
import { decide } from './gate.js';

/** the most decisions one simulation replays */
export const SIMULATE_MAX_DECISIONS = 1000;
const PAGE = 250;

export interface SimulationRequest {
  /** proposed policy sources by policy name */
  readonly policies: ReadonlyMap<string, string>;
  readonly days: number;
  /** at most this many decisions, oldest first (at most SIMULATE_MAX_DECISIONS) */
  readonly limit: number;
  readonly now: number;
}

interface SimulationChange {
  readonly decision_id: string;
  readonly tool: string;
  readonly at: string;
  readonly before: 'allow' | 'deny';
  readonly after: 'allow' | 'deny';
  /** the proposed bundle's deny messages */
  readonly messages: string[];
}

export interface SimulationReport {
  readonly evaluated: number;
  readonly changed: SimulationChange[];
  readonly unchanged_count: number;
  readonly max_decisions: number;
  /** more decisions of the window were left out than the cap allowed */
  readonly truncated: boolean;
  readonly revision: string;
}

/** @throws RegoError when the proposed bundle does not compile */
export async function simulate(collections: Collections, bundles: PolicyBundles, org: OrgId, request: SimulationRequest): Promise<SimulationReport> {
  const proposed = await bundles.build(org, { policies: request.policies });
  const cap = Math.min(request.limit, SIMULATE_MAX_DECISIONS);
  // ids sort by creation time: the smallest id of the window's first millisecond
  let after: string | null =
    `${collections.policyDecisions.spec.idPrefix}_${encodeTime(Math.max(0, request.now - request.days * 86_400_000), 10).toLowerCase()}`;
  const changed: SimulationChange[] = [];
  let evaluated = 0;
  let truncated = false;
  while (after !== null) {
    const page = await collections.policyDecisions.list(org, { limit: PAGE, after });
    for (const decision of page.items) {
      if (evaluated === cap) {
        truncated = true;
        break;
      }
      evaluated += 1;
      let outcome: { allowed: boolean; messages: string[] };
      try {
        outcome = decide(proposed, decision.input);
      } catch (error) {
        // as enforcement does: an evaluation error denies
        if (!(error instanceof RegoError)) throw error;
        outcome = { allowed: false, messages: [`policy evaluation failed: ${error.message}`] };
      }
      const result = outcome.allowed ? 'allow' : 'deny';
      if (result !== decision.result) {
        const resource = decision.input['resource'] as { tool?: unknown } | undefined;
        changed.push({
          decision_id: decision.id,
          tool: typeof resource?.tool === 'string' ? resource.tool : '',
          at: decision.at,
          before: decision.result,
          after: result,
          messages: outcome.messages,
        });
      }
    }
    after = truncated ? null : page.nextAfter;
  }
  return { evaluated, changed, unchanged_count: evaluated - changed.length, max_decisions: SIMULATE_MAX_DECISIONS, truncated, revision: proposed.revision };
}
