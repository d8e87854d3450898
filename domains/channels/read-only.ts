/**
 * The read-only rule of a binding (and of a read-only agent): no write tool
 * runs for its runs. The refusal is a tool result the model reads and relays
 * (the read-only notice).
 */
import type { ToolInterceptor } from '../../runtime/tools/interceptors.js';
import { failedOutcome, toolErrorBody } from '../../runtime/tools/tool-result.js';

export const READ_ONLY_NOTICE =
  'This channel binding is read-only: write actions are not allowed here, so nothing was changed. Tell the person and, if useful, what they could do themselves.';

/** Refuses write-effect calls with code `read_only` and `notice` (default: the binding's). */
export const readOnlyInterceptorWith =
  (notice: string | null): ToolInterceptor =>
  (call, next) =>
    call.effect === 'write' ? Promise.resolve(failedOutcome(toolErrorBody('read_only', notice ?? READ_ONLY_NOTICE, { tool: call.name }))) : next();
