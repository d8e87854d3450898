/**
 * One Socket Mode connection of a chat channel: `connected` (or `failed`)
 * -> `stopped`. The connection itself is the `connection` callback actor the
 * runtime provides (`runtime/channels/socket-mode.ts` opens the WebSocket and
 * closes it when the actor stops); it reports a failure with `FAILED`.
 * Stopping (channel reloaded, disconnected, or the service shutting down)
 * closes the socket.
 */
import { assign, fromCallback, setup } from 'xstate';

export interface SocketInput {
  readonly orgId: string;
  readonly channelId: string;
  readonly appToken: string;
  readonly apiBaseUrl: string | null;
}

export type SocketEvent = { readonly type: 'STOP' } | { readonly type: 'FAILED'; readonly message: string };

export const channelSocketMachine = setup({
  types: { input: {} as SocketInput, context: {} as { input: SocketInput; failure: string | null }, events: {} as SocketEvent },
  actors: {
    // the runtime provides the real connection (`.provide`)
    connection: fromCallback<SocketEvent, SocketInput>(() => {
      throw new Error('connection is provided by the channel runtime');
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
