/**
 * At start, before any new run: runs a previous process left `pending`,
 * `running` or `awaiting_approval` (a crash, a kill -9, a shutdown that ran
 * out of time) are finalized as `failed` with reason `interrupted`, their
 * transcript gets the closing `error` and `message_end` entries, and the chat
 * reply they were writing is marked failed. Nothing stays `running` forever.
 *
 * Resuming instead would need the in-flight model turn and tool calls to be
 * replayable without repeating side effects, which they are not. A parked
 * run is the exception: its state at the approval wait was persisted, so it
 * keeps waiting (AgentRuntime.restoreParked).
 */
import type { Logger } from 'pino';
import type { PlatformCollections as Collections } from '../collections.js';
import { nowIso } from '../ids.js';
import type { OrgId } from '../store/types.js';
import { eventId } from './run-feed.js';

const BATCH = 200;
const MESSAGE = 'the service stopped while the run was in flight';
/** the reply's error, as the chat message shows it */
const INTERRUPTED = Object.freeze({ code: 'interrupted', message: MESSAGE });

/** what a run's owner does with the reply the run was writing (chat marks its message failed with the text so far) */
export type InterruptedReply = (org: OrgId, messageId: string, text: string, error: { readonly code: string; readonly message: string }) => Promise<void>;

export async function finalizeInterruptedRuns(collections: Collections, logger: Logger, onInterruptedReply: InterruptedReply): Promise<number> {
  const { agentRuns, agentRunEvents } = collections;
  let total = 0;
  for (;;) {
    // a parked run (parked_at set) was persisted to continue: it waits again (runtime/agent/parking.ts)
    const batch = await agentRuns.findAcrossOrgs({ status: { in: ['pending', 'running', 'awaiting_approval'] }, parked_at: null }, BATCH);
    if (batch.length === 0) break;
    for (const run of batch) {
      const org = run.org_id;
      const events = await agentRunEvents.findAll(org, { run_id: run.id });
      let seq = events.reduce((max, event) => Math.max(max, event.seq), 0);
      const at = nowIso();
      for (const [type, data] of [
        ['error', { code: 'interrupted', message: MESSAGE }],
        ['message_end', { finish_reason: 'error', usage: run.usage, status: 'failed', cost_usd: run.cost_usd }],
      ] as const) {
        seq += 1;
        await agentRunEvents.insert(org, { id: eventId(run.id, seq), run_id: run.id, seq, type, data: { ...data }, approval_id: null, at });
      }
      await agentRuns.update(org, run.id, { status: 'failed', reason: 'interrupted', error_message: MESSAGE, finished_at: at });
      if (run.message_id !== null) {
        const text = events
          .filter((event) => event.type === 'content_delta')
          .sort((a, b) => a.seq - b.seq)
          .map((event) => (typeof event.data['delta'] === 'string' ? event.data['delta'] : ''))
          .join('');
        await onInterruptedReply(org, run.message_id, text, INTERRUPTED);
      }
      total += 1;
    }
  }
  if (total > 0) logger.warn({ runs: total }, 'agent runs interrupted by the previous stop were finalized as failed');
  return total;
}
