/**
 * Validation of a SQL source: connect (through the egress guard), read the
 * server version inside a READ ONLY transaction and check the server reports
 * the transaction read-only, which is how every tool runs. A refused login,
 * an unknown database or an unreachable host fail with the driver's reason.
 */
import { ToolError, type ConnectorPlugin, type ValidationResult } from '../../contract.js';
import type { SqlEngine } from './engine.js';

export function sqlValidate(engine: SqlEngine): ConnectorPlugin['validate'] {
  return async (config, signal, net): Promise<ValidationResult> => {
    try {
      const facts = await engine.readOnly({ sourceId: null, config, signal, ...(net === undefined ? {} : { net }) }, (session) => engine.serverFacts(session));
      if (!facts.read_only) {
        return {
          ok: false,
          message: `${engine.label} did not make the transaction read-only, so writes could not be refused`,
          details: { reason: 'read_only_unenforceable', ...facts },
        };
      }
      return { ok: true, details: facts };
    } catch (error) {
      const refused = ToolError.within(error);
      if (refused === null) throw error;
      return { ok: false, message: refused.message, details: { reason: refused.code, ...refused.details } };
    }
  };
}
