/**
 * The channel binding machine driven directly: which inbound messages it
 * dispatches under each rule, and `active` <-> `paused` -> `stopped`.
 * Asserts the states and the one effect it names (dispatch).
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { bindingMachine, type BindingRule, type InboundMessage } from '../../actors/binding.machine.js';

const RULE: BindingRule = { orgId: 'org_1', bindingId: 'bnd_1', channelId: 'chn_1', chatChannel: null, mentioned: false, allowBots: false, enabled: true };
const MESSAGE: InboundMessage = {
  channelId: 'chn_1',
  chatChannelId: 'C0OPS0001',
  chatChannelName: 'Ops',
  user: 'U1',
  botId: null,
  fromSelf: false,
  mentioned: false,
  text: 'is the deploy done?',
  ts: '1.000001',
  threadTs: null,
};

function startBinding(rule: Partial<BindingRule> = {}) {
  const dispatched: { rule: BindingRule; message: InboundMessage }[] = [];
  const machine = bindingMachine.provide({
    actions: { dispatch: (_args, params: { rule: BindingRule; message: InboundMessage }) => void dispatched.push(params) },
  });
  const actor = createActor(machine, { input: { ...RULE, ...rule } });
  actor.start();
  return { actor, dispatched };
}

describe('binding machine', () => {
  it.each([
    { case: 'any message of its channel', rule: {}, message: {}, dispatched: true },
    { case: 'a message of another integration channel', rule: {}, message: { channelId: 'chn_2' }, dispatched: false },
    { case: 'its own bot (a reply would trigger the next reply)', rule: { allowBots: true }, message: { fromSelf: true }, dispatched: false },
    { case: 'another bot when bots are not allowed', rule: {}, message: { botId: 'B1' }, dispatched: false },
    { case: 'another bot when bots are allowed', rule: { allowBots: true }, message: { botId: 'B1' }, dispatched: true },
    { case: 'an unmentioned message under mention-only', rule: { mentioned: true }, message: {}, dispatched: false },
    { case: 'a mention under mention-only', rule: { mentioned: true }, message: { mentioned: true }, dispatched: true },
    { case: 'the named chat channel, in any case', rule: { chatChannel: 'ops' }, message: {}, dispatched: true },
    { case: 'another chat channel than the named one', rule: { chatChannel: 'ops' }, message: { chatChannelName: 'random' }, dispatched: false },
    { case: 'a chat channel whose name is unknown when one is named', rule: { chatChannel: 'ops' }, message: { chatChannelName: null }, dispatched: false },
  ])('active: dispatch for $case is $dispatched', ({ rule, message, dispatched }) => {
    const binding = startBinding(rule);
    expect(binding.actor.getSnapshot().value).toBe('active');
    const inbound = { ...MESSAGE, ...message };
    binding.actor.send({ type: 'MESSAGE', message: inbound });
    expect(binding.dispatched).toEqual(dispatched ? [{ rule: { ...RULE, ...rule }, message: inbound }] : []);
    expect(binding.actor.getSnapshot().context.matched).toBe(dispatched ? 1 : 0);
  });

  it('starts paused when disabled and ignores messages until enabled', () => {
    const binding = startBinding({ enabled: false });
    expect(binding.actor.getSnapshot().value).toBe('paused');
    binding.actor.send({ type: 'MESSAGE', message: MESSAGE });
    expect(binding.dispatched).toEqual([]);
    binding.actor.send({ type: 'UPDATE', rule: { ...RULE, mentioned: true } });
    expect(binding.actor.getSnapshot().value).toBe('active');
    binding.actor.send({ type: 'MESSAGE', message: MESSAGE });
    binding.actor.send({ type: 'MESSAGE', message: { ...MESSAGE, mentioned: true, ts: '2.000002' } });
    // the updated rule (mention-only) decides
    expect(binding.dispatched.map((entry) => entry.message.ts)).toEqual(['2.000002']);
    expect(binding.dispatched[0]?.rule.mentioned).toBe(true);
  });

  it('pauses on an UPDATE that disables it, and STOP ends it for good', () => {
    const binding = startBinding();
    binding.actor.send({ type: 'UPDATE', rule: { ...RULE, enabled: false } });
    expect(binding.actor.getSnapshot().value).toBe('paused');
    binding.actor.send({ type: 'MESSAGE', message: MESSAGE });
    expect(binding.dispatched).toEqual([]);
    binding.actor.send({ type: 'STOP' });
    expect(binding.actor.getSnapshot().value).toBe('stopped');
    expect(binding.actor.getSnapshot().status).toBe('done');
    binding.actor.send({ type: 'UPDATE', rule: RULE });
    binding.actor.send({ type: 'MESSAGE', message: MESSAGE });
    expect(binding.actor.getSnapshot().value).toBe('stopped');
    expect(binding.dispatched).toEqual([]);
  });
});
