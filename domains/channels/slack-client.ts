/**
 * The Slack Web API client of the channel runtime: the official
 * `@slack/web-api` WebClient pointed at the channel's API base (a proxy or a
 * Slack-compatible API), quiet, with few retries, and Slack failures mapped
 * to ToolErrors. (The `slack` connector has its own small client: a
 * connector imports only the contract.)
 */
import { ErrorCode, LogLevel, WebClient, type WebAPICallError } from '@slack/web-api';
import { ToolError, type NetPort, type ToolContext } from '../../connectors/contract.js';

export const SLACK_API_URL = 'https://slack.com/api/';

export interface SlackClientConfig {
  readonly bot_token: string;
  /** a Slack-compatible API base ending in `/api/`; default `https://slack.com/api/` */
  readonly base_url?: string | null;
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

/** what a refused token means, for the person connecting the channel */
const EXPLANATIONS: Readonly<Record<string, string>> = {
  invalid_auth: 'the bot token was refused',
  not_authed: 'no bot token was sent',
  account_inactive: 'the bot token belongs to a deleted app or user',
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

/**
 * How a binding's reply goes out: `chat.postMessage` with the channel's bot
 * (`ctx.config`: `bot_token`, `base_url`), failures as ToolErrors; the same
 * call as the slack connector's `post_message`.
 */
export const postMessageTool = {
  async run(args: Record<string, unknown>, ctx: ToolContext): Promise<void> {
    ctx.signal.throwIfAborted();
    const base = ctx.config['base_url'];
    const client = createSlackClient({ bot_token: String(ctx.config['bot_token']), base_url: typeof base === 'string' && base !== '' ? base : null }, ctx.net);
    const threadTs = typeof args['thread_ts'] === 'string' ? args['thread_ts'] : undefined;
    try {
      await client.chat.postMessage({
        channel: String(args['channel']),
        text: String(args['text']),
        ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
      });
    } catch (error) {
      throw toToolError(error, 'chat.postMessage');
    }
  },
};
