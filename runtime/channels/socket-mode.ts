/**
 * Socket Mode: for bots that cannot expose a URL, the channel holds a
 * WebSocket to Slack (`@slack/socket-mode`, which opens it with
 * `apps.connections.open` and the app token) and receives the same event
 * envelopes the Events API would post. The connection is an actor of kind
 * `channel_socket` under the supervisor: `connected` (or `failed`) -> `stopped`;
 * stopping it (channel reloaded, disconnected, or the service shutting down)
 * closes the socket.
 */
import { LogLevel, SocketModeClient, type Logger as SlackLogger } from '@slack/socket-mode';
import type { Logger } from 'pino';
import { assign, fromCallback, setup } from 'xstate';
import { SLACK_API_URL } from '../../connectors/slack/index.js';

export const CHANNEL_SOCKET_KIND = 'channel_socket';

export interface SocketInput {
  readonly orgId: string;
  readonly channelId: string;
  readonly appToken: string;
  readonly apiBaseUrl: string | null;
}

/** Called for each events_api envelope, after it was acknowledged. */
export type SocketEventHandler = (input: SocketInput, body: unknown, retryNum: number | undefined) => void;

type SocketEvent = { readonly type: 'STOP' } | { readonly type: 'FAILED'; readonly message: string };

/** The client's own log lines, into the service log (reconnects are warnings, not console noise). */
function slackLogger(logger: Logger, input: SocketInput): SlackLogger {
  const child = logger.child({ channel: input.channelId, component: 'slack-socket-mode' });
  let level = LogLevel.WARN;
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...messages: unknown[]) => child.warn(messages.map(String).join(' ')),
    error: (...messages: unknown[]) => child.warn(messages.map(String).join(' ')),
    setLevel: (next: LogLevel) => void (level = next),
    getLevel: () => level,
    setName: () => undefined,
  };
}

export function socketMachine(onEvent: SocketEventHandler, logger: Logger) {
  return setup({
    types: { input: {} as SocketInput, context: {} as { input: SocketInput; failure: string | null }, events: {} as SocketEvent },
    actors: {
      connection: fromCallback<SocketEvent, SocketInput>(({ input, sendBack }) => {
        const client = new SocketModeClient({
          appToken: input.appToken,
          logger: slackLogger(logger, input),
          clientOptions: { slackApiUrl: input.apiBaseUrl ?? SLACK_API_URL },
        });
        client.on('slack_event', ({ ack, type, body, retry_num }: { ack: () => Promise<void>; type: string; body: unknown; retry_num?: number }) => {
          // acknowledge first: Slack redelivers envelopes not acknowledged within 3 seconds
          ack().then(
            () => {
              if (type === 'events_api') onEvent(input, body, retry_num);
            },
            () => undefined,
          );
        });
        client.start().catch((error: unknown) => sendBack({ type: 'FAILED', message: error instanceof Error ? error.message : String(error) }));
        return () => {
          client.disconnect().catch(() => undefined);
        };
      }),
    },
  }).createMachine({
    id: 'channel_socket',
    context: ({ input }) => ({ input, failure: null }),
    initial: 'connected',
    states: {
      connected: {
        invoke: { src: 'connection', input: ({ context }) => context.input },
        on: { FAILED: { target: 'failed', actions: assign({ failure: ({ event }) => (event.type === 'FAILED' ? event.message : null) }) } },
      },
      failed: {},
      stopped: { type: 'final' },
    },
    on: { STOP: '.stopped' },
  });
}
