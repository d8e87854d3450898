/**
 * The slack connector's Slack Web API client: form-encoded POSTs to
 * `<base_url><method>` with the bot token, on the egress guard's fetch
 * (`ctx.net`; base_url is the tenant's), a 429 waited out per its
 * Retry-After, a network failure retried twice, and Slack's failures mapped
 * to ToolErrors the model can read (Slack's own `error` string becomes the
 * code: `not_in_channel`, ...).
 */
import { ToolError, type NetPort } from '../contract.js';

const SLACK_API_URL = 'https://slack.com/api/';
const MAX_ATTEMPTS = 3;
/** a Retry-After longer than this is not waited for: the call fails with `rate_limited_upstream` */
const MAX_RETRY_AFTER_MS = 30_000;
const NETWORK_RETRY_MS = 200;
const TIMEOUT_MS = 30_000;

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

type SlackParams = Readonly<Record<string, string | number | boolean | undefined>>;

/** What Slack answered: its JSON (`ok: true`) and the token's scopes (the `x-oauth-scopes` header). */
interface SlackAnswer {
  readonly data: Readonly<Record<string, unknown>>;
  readonly scopes: readonly string[];
}

/** One Web API call for a source (`ctx.config`: `bot_token`, `base_url`); throws ToolErrors. */
export type SlackCall = (method: string, params: SlackParams, signal: AbortSignal) => Promise<SlackAnswer>;

const wait = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

function platformError(method: string, data: Readonly<Record<string, unknown>>): ToolError {
  const code = typeof data['error'] === 'string' ? data['error'] : 'upstream_error';
  const needed = data['needed'];
  return new ToolError(code, `Slack ${method} failed: ${EXPLANATIONS[code] ?? code}`, {
    method,
    ...(typeof needed === 'string' ? { needed_scope: needed } : {}),
  });
}

export function slackWebApi(config: Readonly<Record<string, unknown>>, net?: NetPort): SlackCall {
  const token = config['bot_token'];
  const base = typeof config['base_url'] === 'string' && config['base_url'] !== '' ? config['base_url'] : SLACK_API_URL;
  const doFetch = net?.fetch ?? fetch;
  return async (method, params, signal) => {
    if (typeof token !== 'string' || token === '') throw new ToolError('source_misconfigured', 'the slack source has no bot_token');
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined) body.set(name, String(value));
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      let response: Response;
      try {
        response = await doFetch(new URL(method, base), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
          body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
        });
      } catch (error) {
        signal.throwIfAborted();
        const refused = ToolError.within(error);
        if (refused !== null) throw refused;
        if (attempt < MAX_ATTEMPTS) {
          await wait(NETWORK_RETRY_MS, signal);
          continue;
        }
        throw new ToolError('upstream_unreachable', `Slack could not be reached for ${method}: ${(error as Error).message}`);
      }
      if (response.status === 429) {
        await response.body?.cancel();
        const retryAfterSecs = Number(response.headers.get('retry-after') ?? '1');
        const delayMs = (Number.isFinite(retryAfterSecs) ? retryAfterSecs : 1) * 1000;
        if (attempt >= MAX_ATTEMPTS || delayMs > MAX_RETRY_AFTER_MS) {
          throw new ToolError('rate_limited_upstream', `Slack rate-limited ${method}; retry in ${retryAfterSecs} s`, { retry_after_secs: retryAfterSecs });
        }
        await wait(delayMs, signal);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ToolError('upstream_error', `Slack answered ${method} with HTTP ${response.status}`, { status: response.status });
      }
      const data = (await response.json()) as Record<string, unknown>;
      if (data['ok'] !== true) throw platformError(method, data);
      const scopes = (response.headers.get('x-oauth-scopes') ?? '')
        .split(',')
        .map((scope) => scope.trim())
        .filter((scope) => scope !== '');
      return { data, scopes };
    }
  };
}
