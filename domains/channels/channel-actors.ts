/**
 * The actors of chat channels under the supervisor: one `channel_binding`
 * actor per binding (started at boot, on create, updated on change, stopped
 * on delete) and one `channel_socket` actor per Socket Mode connection.
 * Inbound messages of a channel go to each of its binding actors, which
 * decide and name `dispatch`.
 */
import type { Logger } from 'pino';
import { bindingMachine, type BindingRule, type InboundMessage } from '../../actors/binding.machine.js';
import type { SocketInput } from '../../actors/channel-socket.machine.js';
import type { NetPort } from '../../connectors/contract.js';
import type { BindingDoc } from './documents.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { KindHandle, Supervisor } from '../../runtime/supervisor.js';
import { CHANNEL_SOCKET_KIND, socketMachine, type SocketEventHandler } from './socket-mode.js';

const CHANNEL_BINDING_KIND = 'channel_binding';

const socketActorId = (channelId: string): string => `sock_${channelId}`;

function ruleOf(org: OrgId, binding: BindingDoc): BindingRule {
  return {
    orgId: org,
    bindingId: binding.id,
    channelId: binding.channel_id,
    chatChannel: binding.match_rule.slack_channel === null ? null : binding.match_rule.slack_channel.replace(/^#/, '').toLowerCase(),
    mentioned: binding.match_rule.mentioned,
    allowBots: binding.allow_bots,
    enabled: binding.enabled,
  };
}

export interface ChannelActorsOptions {
  readonly supervisor: Supervisor;
  readonly logger: Logger;
  readonly egress: NetPort;
  /** a binding took a message */
  readonly dispatch: (rule: BindingRule, message: InboundMessage) => void;
  /** a Socket Mode connection received an events_api envelope */
  readonly onSocketEvent: SocketEventHandler;
  /** awaited at shutdown: work the bindings started */
  readonly drain: () => Promise<void>;
}

export class ChannelActors {
  private readonly supervisor: Supervisor;
  private readonly bindings: KindHandle<typeof bindingMachine>;
  private readonly sockets: KindHandle<ReturnType<typeof socketMachine>>;
  /** channel id -> ids of its binding actors */
  private readonly bindingsOf = new Map<string, Set<string>>();

  constructor(options: ChannelActorsOptions) {
    this.supervisor = options.supervisor;
    this.bindings = options.supervisor.registerKind({
      kind: CHANNEL_BINDING_KIND,
      logic: bindingMachine.provide({
        actions: { dispatch: (_args, params) => options.dispatch(params.rule, params.message) },
      }),
      // a binding holds no state worth losing: start it again from its rule
      policy: { onFailure: 'restart', maxRestarts: 5 },
      shutdownEvent: { type: 'STOP' },
      drain: options.drain,
    });
    this.sockets = options.supervisor.registerKind({
      kind: CHANNEL_SOCKET_KIND,
      logic: socketMachine(options.onSocketEvent, options.logger, options.egress),
      policy: { onFailure: 'restart', maxRestarts: 3 },
      shutdownEvent: { type: 'STOP' },
    });
  }

  /** A binding was created or changed: its actor starts or takes the new rule. */
  bindingSaved(org: OrgId, binding: BindingDoc): void {
    const rule = ruleOf(org, binding);
    if (!this.bindings.send(binding.id, { type: 'UPDATE', rule })) this.spawnBinding(org, binding);
    for (const [channelId, ids] of this.bindingsOf) if (channelId !== binding.channel_id) ids.delete(binding.id);
    this.bindingIds(binding.channel_id).add(binding.id);
  }

  spawnBinding(org: OrgId, binding: BindingDoc): void {
    this.bindingIds(binding.channel_id).add(binding.id);
    this.bindings.spawn({ id: binding.id, input: ruleOf(org, binding), orgId: org });
  }

  async bindingRemoved(binding: BindingDoc): Promise<void> {
    this.bindingsOf.get(binding.channel_id)?.delete(binding.id);
    if (this.bindings.send(binding.id, { type: 'STOP' })) await this.supervisor.whenFinished(binding.id);
  }

  /** Hands a message to every binding of its channel. */
  deliver(channelId: string, message: InboundMessage): void {
    for (const id of this.bindingsOf.get(channelId) ?? []) this.bindings.send(id, { type: 'MESSAGE', message });
  }

  hasBindings(channelId: string): boolean {
    return (this.bindingsOf.get(channelId)?.size ?? 0) > 0;
  }

  spawnSocket(input: SocketInput): void {
    this.sockets.spawn({ id: socketActorId(input.channelId), input, orgId: input.orgId });
  }

  async stopSocket(channelId: string): Promise<void> {
    const id = socketActorId(channelId);
    if (this.sockets.send(id, { type: 'STOP' })) await this.supervisor.whenFinished(id);
  }

  /** The Socket Mode actor's state and, once failed, why (null when the channel has none live). */
  socketState(channelId: string): { readonly state: string; readonly failure: string | null } | null {
    const snapshot = this.sockets.snapshot(socketActorId(channelId));
    return snapshot ? { state: String(snapshot.value), failure: snapshot.context.failure } : null;
  }

  /** The channel is going away: its socket and binding actors stop. */
  async channelRemoved(channelId: string): Promise<void> {
    await this.stopSocket(channelId);
    for (const bindingId of this.bindingsOf.get(channelId) ?? []) {
      if (this.bindings.send(bindingId, { type: 'STOP' })) await this.supervisor.whenFinished(bindingId);
    }
    this.bindingsOf.delete(channelId);
  }

  private bindingIds(channelId: string): Set<string> {
    let ids = this.bindingsOf.get(channelId);
    if (!ids) {
      ids = new Set();
      this.bindingsOf.set(channelId, ids);
    }
    return ids;
  }
}
