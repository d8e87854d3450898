/**
 * The Slack Web API client every slack tool and the channel runtime use: the
 * official `@slack/web-api` WebClient pointed at `base_url` (a proxy or a
 * Slack-compatible API), quiet, with few retries, and Slack failures mapped
 * to ToolErrors the model can read.
 */
import { ErrorCode, LogLevel, WebClient, type WebAPICallError } from '@slack/web-api';
import { ToolError, type NetPort } from '../contract.js';

export const SLACK_API_URL = 'https://slack.com/api/';

export interface SlackClientConfig {
  readonly bot_token: string;
  /** a Slack-compatible API base ending in `/api/`; default `https://slack.com/api/` */
  readonly base_url?: string | null;
}

/** Reads the two fields the client needs from a validated source config. */
export function slackConfigOf(config: Readonly<Record<string, unknown>>): SlackClientConfig {
  const token = config['bot_token'];
  const base = config['base_url'];
  if (typeof token !== 'string' || token === '') throw new ToolError('source_misconfigured', 'the slack source has no bot_token');
  return { bot_token: token, base_url: typeof base === 'string' && base !== '' ? base : null };
}

/** `net`: the egress guard, whose agent carries every connection (base_url is the tenant's; each redirect hop connects through it too) */
export function createSlackClient(config: SlackClientConfig, net?: NetPort): WebClient {
  const slackApiUrl = config.base_url ?? SLACK_API_URL;
  return new WebClient(config.bot_token, {
    slackApiUrl,
    ...(net === undefined ? {} : { agent: net.agent(new URL(slackApiUrl).protocol === 'http:' ? 'http:' : 'https:') }),
    logLevel: LogLevel.ERROR,
    // 429s wait for Retry-After (the client does that); network failures are retried twice, not for half an hour
    retryConfig: { retries: 2, factor: 1, minTimeout: 200, maxTimeout: 1000 },
    timeout: 30_000,
  });
}

/** Explanations of the Slack errors the model is likely to meet, so it can tell the person what to do. */
const EXPLANATIONS: Readonly<Record<string, string>> = {
  not_in_channel: 'the bot is not a member of this channel: invite it (/invite @bot) or grant it the chat:write.public scope',
  channel_not_found: 'no channel with this id is visible to the bot (use find_channel to look a name up)',
  thread_not_found: 'no thread with this ts in the channel',
  is_archived: 'the channel is archived',
  missing_scope: 'the bot token lacks a scope this call needs',
  invalid_auth: 'the bot token was refused',
  not_authed: 'no bot token was sent',
  account_inactive: 'the bot token belongs to a deleted app or user',
  msg_too_long: 'the message text is too long',
};

function isWebApiError(error: unknown): error is WebAPICallError {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('slack_webapi_');
}

/** A Slack failure as a ToolError: Slack's own `error` string becomes the code (`not_in_channel`, ...). */
export function toToolError(error: unknown, method: string): unknown {
  if (ToolError.is(error) || !isWebApiError(error)) return error;
  switch (error.code) {
    case ErrorCode.PlatformError: {
      const code = error.data.error;
      const details: Record<string, unknown> = { method };
      const needed: unknown = 'needed' in error.data ? error.data.needed : undefined;
      if (typeof needed === 'string') details['needed_scope'] = needed;
      return new ToolError(code, `Slack ${method} failed: ${EXPLANATIONS[code] ?? code}`, details);
    }
    case ErrorCode.RateLimitedError:
      return new ToolError('rate_limited_upstream', `Slack rate-limited ${method}; retry in ${error.retryAfter} s`, { retry_after_secs: error.retryAfter });
    case ErrorCode.HTTPError:
      return new ToolError('upstream_error', `Slack answered ${method} with HTTP ${error.statusCode}`, { status: error.statusCode });
    default: {
      // the egress guard's refusal, under axios's error under the client's
      const refused = ToolError.within('original' in error ? error.original : null);
      if (refused !== null) return refused;
      return new ToolError('upstream_unreachable', `Slack could not be reached for ${method}: ${error.message}`);
    }
  }
}

/** Runs one Web API call for a tool: honours the signal before the call and maps failures. */
export async function slackCall<T>(method: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  try {
    return await call();
  } catch (error) {
    throw toToolError(error, method);
  }
}
