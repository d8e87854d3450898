/**
 * Socket Mode: for bots that cannot expose a URL, the channel holds a
 * WebSocket to Slack (`@slack/socket-mode`, which opens it with
 * `apps.connections.open` and the app token) and receives the same event
 * envelopes the Events API would post. The connection runs as the
 * `connection` of a `channel_socket` actor (`actors/channel-socket.machine.ts`);
 * this module supplies it.
 */
import { LogLevel, SocketModeClient, type Logger as SlackLogger } from '@slack/socket-mode';
import type { Logger } from 'pino';
import { fromCallback } from 'xstate';
import { channelSocketMachine, type SocketEvent, type SocketInput } from '../../actors/channel-socket.machine.js';
import type { NetPort } from '../../connectors/contract.js';
import { SLACK_API_URL } from './slack-client.js';

export const CHANNEL_SOCKET_KIND = 'channel_socket';

/** Called for each events_api envelope, after it was acknowledged. */
export type SocketEventHandler = (input: SocketInput, body: unknown, retryNum: number | undefined) => void;

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

/**
 * The socket machine with its connection. `net`: the egress guard. The Web
 * API call that opens the connection and the WebSocket it then dials (a URL
 * the API answered, so the tenant's `api_base_url` chooses it) both connect
 * through the guard's agent.
 */
export function socketMachine(onEvent: SocketEventHandler, logger: Logger, net: NetPort) {
  return channelSocketMachine.provide({
    actors: {
      connection: fromCallback<SocketEvent, SocketInput>(({ input, sendBack }) => {
        const apiUrl = input.apiBaseUrl ?? SLACK_API_URL;
        const client = new SocketModeClient({
          appToken: input.appToken,
          logger: slackLogger(logger, input),
          clientOptions: { slackApiUrl: apiUrl, agent: net.agent(new URL(apiUrl).protocol === 'http:' ? 'http:' : 'https:') },
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
        const failed = (error: unknown): void => {
          // the WebSocket's own failure (refused by the egress guard, reset, TLS) names its cause
          const cause = (error as { original?: unknown })?.original;
          const message = [error, cause]
            .filter((part) => part instanceof Error)
            .map((part) => part.message)
            .join(': ');
          sendBack({ type: 'FAILED', message: message || String(error) });
        };
        // an 'error' event with no listener would throw out of the socket's callback and end the process
        client.on('error', failed);
        client.start().catch(failed);
        return () => {
          client.disconnect().catch(() => undefined);
        };
      }),
    },
  });
}
