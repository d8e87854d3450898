/**
 * What every sourceless built-in connector (memory, graph, webhooks, files)
 * declares alike: it works on the organization's own data, so its tools are
 * in every run and it takes no configuration at all.
 */
import type { ConnectorPlugin } from '../contract.js';

export function sourcelessParts(kind: string): Pick<ConnectorPlugin, 'sourceless' | 'configSchema' | 'validate'> {
  return {
    sourceless: true,
    configSchema: { type: 'object', additionalProperties: false },
    validate: async (config) => {
      const unexpected = Object.keys(config);
      if (unexpected.length === 0) return { ok: true };
      return { ok: false, message: `the ${kind} connector takes no configuration`, details: { unexpected_keys: unexpected } };
    },
  };
}
