/** The agent runtime's options: defaults and the errors that name the variable. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';

const base = { JWT_SECRET: 'c'.repeat(32), DATA_DIR: '/tmp/agent-config-test' };

describe('agent runtime configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig(base);
    expect([config.agentRunTimeoutSecs, config.chatCostCapUsdPerDay, config.shutdownGraceSecs]).toEqual([600, null, 10]);
    const set = loadConfig({ ...base, AGENT_RUN_TIMEOUT_SECS: '5', CHAT_COST_CAP_USD_PER_DAY: '2.5', SHUTDOWN_GRACE_SECS: '0' });
    expect([set.agentRunTimeoutSecs, set.chatCostCapUsdPerDay, set.shutdownGraceSecs]).toEqual([5, 2.5, 0]);
  });

  it('rejects bad values naming the variable', () => {
    for (const [name, value, message] of [
      ['AGENT_RUN_TIMEOUT_SECS', '0', 'AGENT_RUN_TIMEOUT_SECS: must be between 1 and 86400, got 0'],
      ['CHAT_COST_CAP_USD_PER_DAY', '-1', 'CHAT_COST_CAP_USD_PER_DAY: must be a non-negative number of USD, got "-1"'],
      ['CHAT_COST_CAP_USD_PER_DAY', 'lots', 'CHAT_COST_CAP_USD_PER_DAY: must be a non-negative number of USD, got "lots"'],
      ['SHUTDOWN_GRACE_SECS', 'soon', 'SHUTDOWN_GRACE_SECS: must be an integer, got "soon"'],
    ] as const) {
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(message);
    }
  });
});
