/** The connector's `validate`: `auth.test` with the bot token, and the scopes it grants (`x-oauth-scopes`) against the ones the tools need. */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { slackWebApi } from './web-api.js';

/** posting and reading history */
const NEEDED_SCOPES = ['chat:write', 'channels:history'];
/** lets the bot post in public channels it has not joined */
const WELCOME_SCOPES = ['chat:write.public'];

export async function validateSlackSource(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  signal.throwIfAborted();
  let granted: readonly string[];
  try {
    granted = (await slackWebApi(config, net)('auth.test', {}, signal)).scopes;
  } catch (error) {
    if (!ToolError.is(error)) throw error;
    return { ok: false, message: error.message, details: { ...(error.code === 'egress_refused' ? error.details : {}), reason: error.code } };
  }
  const lacking = NEEDED_SCOPES.filter((scope) => !granted.includes(scope));
  const optional = WELCOME_SCOPES.filter((scope) => !granted.includes(scope));
  if (lacking.length === 0) return { ok: true, details: { granted_scopes: granted, missing_optional_scopes: optional } };
  return {
    ok: false,
    message: `the bot token lacks the scope${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}`,
    details: { reason: 'missing_scopes', missing_scopes: lacking, missing_optional_scopes: optional, granted_scopes: granted },
  };
}
