/**
 * A channel binding: `active` <-> `paused` -> `stopped`.
 *
 * The actor holds the binding's current rule and decides, for each inbound
 * chat message of its channel, whether the rule holds (mention-only, chat
 * channel name, bots). When it does, it names the side effect `dispatch`,
 * which the channel runtime (domains/channels/) supplies: rate limits, the
 * agent run, the reply. A paused binding (disabled) ignores messages; `STOP`
 * (binding deleted or service shutdown) ends it.
 */
import { assign, setup } from 'xstate';

/** The parts of a binding the actor decides with (a copy of the stored record's fields). */
export interface BindingRule {
  readonly orgId: string;
  readonly bindingId: string;
  readonly channelId: string;
  /** chat channel name without `#`, lowercased; null: every chat channel of the integration */
  readonly chatChannel: string | null;
  readonly mentioned: boolean;
  readonly allowBots: boolean;
  readonly enabled: boolean;
}

/** An inbound chat message, already verified, deduplicated and normalized by the channel runtime. */
export interface InboundMessage {
  readonly channelId: string;
  /** the platform's channel id (C...) and, when resolved, its name */
  readonly chatChannelId: string;
  readonly chatChannelName: string | null;
  readonly user: string | null;
  /** set when another bot wrote it */
  readonly botId: string | null;
  /** the service's own bot wrote it */
  readonly fromSelf: boolean;
  readonly mentioned: boolean;
  readonly text: string;
  readonly ts: string;
  /** the thread the message is in (null: a top-level message) */
  readonly threadTs: string | null;
}

export type BindingEvent =
  { readonly type: 'MESSAGE'; readonly message: InboundMessage } | { readonly type: 'UPDATE'; readonly rule: BindingRule } | { readonly type: 'STOP' };

export interface BindingContext {
  rule: BindingRule;
  /** messages that matched since the actor started (shown in the registry's state) */
  matched: number;
}

/** Whether the rule takes the message. Pure, so the routing decision is testable without a run. */
function ruleMatches(rule: BindingRule, message: InboundMessage): boolean {
  if (message.channelId !== rule.channelId) return false;
  // never answer ourselves: a reply would trigger the next reply
  if (message.fromSelf) return false;
  if (message.botId !== null && !rule.allowBots) return false;
  if (rule.mentioned && !message.mentioned) return false;
  if (rule.chatChannel !== null && (message.chatChannelName ?? '').toLowerCase() !== rule.chatChannel) return false;
  return true;
}

const notProvided = () => {
  throw new Error('binding: side effect "dispatch" was not provided by the channel runtime');
};

export const bindingMachine = setup({
  types: {
    context: {} as BindingContext,
    events: {} as BindingEvent,
    input: {} as BindingRule,
  },
  actions: {
    dispatch: (_args, _params: { rule: BindingRule; message: InboundMessage }) => notProvided(),
  },
  guards: {
    matches: ({ context, event }) => event.type === 'MESSAGE' && ruleMatches(context.rule, event.message),
    enabled: ({ event }) => event.type === 'UPDATE' && event.rule.enabled,
  },
}).createMachine({
  id: 'binding',
  context: ({ input }) => ({ rule: input, matched: 0 }),
  initial: 'routing',
  states: {
    routing: {
      always: [{ target: 'active', guard: ({ context }) => context.rule.enabled }, { target: 'paused' }],
    },
    active: {
      on: {
        MESSAGE: {
          guard: 'matches',
          actions: [
            assign({ matched: ({ context }) => context.matched + 1 }),
            {
              type: 'dispatch',
              params: ({ context, event }) => ({ rule: context.rule, message: event.message }),
            },
          ],
        },
      },
    },
    paused: {},
    stopped: { type: 'final' },
  },
  on: {
    UPDATE: [
      { guard: 'enabled', target: '.active', actions: assign({ rule: ({ event }) => event.rule }) },
      { target: '.paused', actions: assign({ rule: ({ event }) => event.rule }) },
    ],
    STOP: { target: '.stopped' },
  },
});
