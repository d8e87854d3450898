/**
 * One outbound delivery as an actor: wait (the backoff), send (one attempt,
 * supplied by `runtime/webhooks/dispatcher.ts`), then finish or wait again. Time runs on the
 * supervisor's clock. At shutdown (`PARK`) a waiting delivery stops at once
 * and a sending one after its attempt: the stored delivery stays `queued`
 * and the next start resumes it.
 */
import { assign, fromPromise, setup } from 'xstate';

export interface DeliveryRef {
  readonly orgId: string;
  readonly deliveryId: string;
}

export interface DeliveryActorInput extends DeliveryRef {
  /** wait before the first attempt (0 for a new delivery; the rest of the backoff on resume) */
  readonly firstDelayMs: number;
}

/** What one attempt decided. */
export interface AttemptOutcome {
  /** delivered, failed for good, or gone: no further attempt */
  readonly done: boolean;
  /** when not done: wait this long before the next attempt */
  readonly retryInMs: number;
}

interface DeliveryContext extends DeliveryActorInput {
  readonly delayMs: number;
  readonly parking: boolean;
}

export const deliveryMachine = setup({
  types: {
    context: {} as DeliveryContext,
    input: {} as DeliveryActorInput,
    events: {} as { type: 'PARK' },
  },
  actors: {
    // the dispatcher provides the real attempt (`.provide`)
    attempt: fromPromise<AttemptOutcome, DeliveryRef>(() => Promise.reject(new Error('attempt is provided by the dispatcher'))),
  },
  delays: {
    backoff: ({ context }) => context.delayMs,
  },
}).createMachine({
  id: 'webhook_delivery',
  context: ({ input }) => ({ ...input, delayMs: input.firstDelayMs, parking: false }),
  initial: 'waiting',
  states: {
    waiting: {
      after: { backoff: 'sending' },
      on: { PARK: 'parked' },
    },
    sending: {
      invoke: {
        src: 'attempt',
        input: ({ context }) => ({ orgId: context.orgId, deliveryId: context.deliveryId }),
        onDone: [
          { guard: ({ event }) => event.output.done, target: 'finished' },
          { guard: ({ context }) => context.parking, target: 'parked' },
          { target: 'waiting', actions: assign({ delayMs: ({ event }) => event.output.retryInMs }) },
        ],
      },
      on: { PARK: { actions: assign({ parking: true }) } },
    },
    finished: { type: 'final' },
    parked: { type: 'final' },
  },
});
