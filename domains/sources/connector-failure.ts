/**
 * What a connector failure reads as once stored on a source or a sync job and
 * shown to the caller. A ToolError is the connector's own account and is kept.
 * Anything else is an exception the connector did not mean to raise: a network
 * failure (kept as its system code, e.g. ECONNREFUSED), a timeout, or a bug
 * such as a TypeError on an upstream answer of an unexpected shape. The text of
 * such a bug (`orgs.find is not a function`) says nothing useful to the caller
 * and exposes the connector's insides, so it is logged by the caller and
 * replaced here by a typed, generic account.
 */
import { ToolError } from '../../connectors/contract.js';
import type { SourceDoc, SourceError } from './types.js';

/** the code of any failure that is not the connector's own ToolError */
const CONNECTOR_FAILURE_CODE = 'sync_failed';

const systemCodeOf = (error: unknown): string | null => {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return null;
};

/** The failure of connector `kind` as stored and shown (never the raw text of an unexpected exception). */
export function connectorFailure(error: unknown, kind: string): SourceError {
  // SDKs wrap what fetch threw (an egress refusal) as `cause`: the connector's own account is kept
  const own = ToolError.within(error);
  if (own !== null) return { code: own.code, message: own.message, ...(own.details ? { details: own.details } : {}) };
  const system = systemCodeOf(error);
  if (system !== null) {
    return { code: CONNECTOR_FAILURE_CODE, message: `${kind}: the system could not be reached (${system})`, details: { cause: system } };
  }
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return { code: CONNECTOR_FAILURE_CODE, message: `${kind}: the system did not answer in time`, details: { cause: 'timeout' } };
  }
  return {
    code: CONNECTOR_FAILURE_CODE,
    message: `the ${kind} connector failed with an unexpected error (the details are in the server log)`,
    details: { cause: 'connector_error' },
  };
}

/** whether connectorFailure hides the text of `error` as a bug of the connector (worth a log line with the stack) */
export const isUnexpected = (error: unknown): boolean => connectorFailure(error, '').details?.['cause'] === 'connector_error';

/** failures only validation records: a source with one offers no tools to runs until it validates again (or its config changes) */
const VALIDATION_FAILURES = new Set(['source_validation_failed', 'egress_refused']);
export const validationFailed = (source: Pick<SourceDoc, 'status' | 'last_error'>): boolean =>
  source.status === 'failed' && VALIDATION_FAILURES.has(source.last_error?.code ?? '');
