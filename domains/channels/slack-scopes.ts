/**
 * Which bot scopes the service needs, and the check of a token against them
 * (`auth.test`, whose `x-oauth-scopes` header lists the token's scopes).
 * Used when a channel connects and by its test action.
 */
import type { WebClient } from '@slack/web-api';
import { ToolError, type ValidationResult } from '../../connectors/contract.js';
import { toToolError } from './slack-client.js';

/** posting replies and reading history (mentions arrive only with channels:history) */
export const REQUIRED_SCOPES = ['chat:write', 'channels:history'] as const;
/** lets the bot post in public channels it has not joined */
export const OPTIONAL_SCOPES = ['chat:write.public'] as const;

interface SlackIdentity {
  readonly team_id: string | null;
  readonly team: string | null;
  readonly bot_user_id: string | null;
  readonly bot_id: string | null;
  readonly scopes: readonly string[];
}

export interface SlackCheck extends ValidationResult {
  readonly identity?: SlackIdentity;
}

/** Calls auth.test and names every missing required scope (and the missing optional ones, as a note). */
export async function checkSlackToken(client: WebClient): Promise<SlackCheck> {
  let answer: Awaited<ReturnType<WebClient['auth']['test']>>;
  try {
    answer = await client.auth.test();
  } catch (error) {
    const mapped = toToolError(error, 'auth.test');
    if (ToolError.is(mapped))
      return { ok: false, message: mapped.message, details: { ...(mapped.code === 'egress_refused' ? mapped.details : {}), reason: mapped.code } };
    throw mapped;
  }
  const scopes = answer.response_metadata?.scopes ?? [];
  const identity: SlackIdentity = {
    team_id: answer.team_id ?? null,
    team: answer.team ?? null,
    bot_user_id: answer.user_id ?? null,
    bot_id: answer.bot_id ?? null,
    scopes,
  };
  const missing = REQUIRED_SCOPES.filter((scope) => !scopes.includes(scope));
  const missingOptional = OPTIONAL_SCOPES.filter((scope) => !scopes.includes(scope));
  if (missing.length > 0) {
    return {
      ok: false,
      message: `the bot token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
      details: { reason: 'missing_scopes', missing_scopes: missing, missing_optional_scopes: missingOptional, granted_scopes: scopes },
      identity,
    };
  }
  return { ok: true, details: { granted_scopes: scopes, missing_optional_scopes: missingOptional }, identity };
}
