/**
 * Retries one model turn on 429, 408/409, 5xx and connection failures with
 * exponential backoff plus jitter, honouring `retry-after`. Only before the
 * turn's first event has been yielded: once output has streamed, a retry would
 * duplicate it, so a later failure is thrown as is.
 */
import { LlmError, type LlmErrorCode } from './types.js';

export interface RetryOptions {
  /** total attempts, the first included. @default 4 */
  readonly maxAttempts?: number;
  /** first backoff step, doubled each attempt. @default 500 */
  readonly baseDelayMs?: number;
  /** longest single wait; a longer `retry-after` ends the retries at once. @default 20000 */
  readonly maxDelayMs?: number;
  /** when the next wait would push the sum of waits past this, give up. @default 45000 */
  readonly maxTotalWaitMs?: number;
  /** injectable so tests never really wait; must reject (or resolve) promptly on abort */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** [0, 1): injectable for deterministic jitter */
  readonly random?: () => number;
  /** told before each wait, e.g. to log or record the retry */
  readonly onRetry?: (retry: { readonly attempt: number; readonly delayMs: number; readonly error: LlmError }) => void;
}

/** A failed attempt, with what the retry loop needs to decide. */
export class LlmAttemptError extends LlmError {
  constructor(
    code: LlmErrorCode,
    message: string,
    status: number | undefined,
    /** the provider's `retry-after` (or `retry-after-ms`), when it sent one */
    readonly retryAfterMs: number | null = null,
  ) {
    super(code, message, status);
  }

  get retryable(): boolean {
    if (this.code === 'llm_unreachable' || this.code === 'llm_rate_limited') return true;
    if (this.code !== 'llm_provider_error' || this.status === undefined) return false;
    return this.status === 408 || this.status === 409 || this.status >= 500;
  }
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Backoff before attempt `attempt + 1`: base * 2^(attempt-1), with the upper half jittered. */
function backoffMs(attempt: number, options: RetryOptions = {}): number {
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 20_000;
  const exponential = Math.min(max, base * 2 ** (attempt - 1));
  const random = options.random ?? Math.random;
  return Math.round(exponential / 2 + (exponential / 2) * random());
}

function abortedError(provider: string): LlmError {
  return new LlmError('llm_aborted', `the ${provider} request was aborted`);
}

/**
 * Runs `attempt` until it streams to the end, retrying failures that happen
 * before its first event. `attempt` throws LlmAttemptError (or LlmError).
 */
export async function* withRetry<T>(
  provider: string,
  attempt: () => AsyncIterable<T>,
  signal: AbortSignal | undefined,
  options: RetryOptions = {},
): AsyncGenerator<T> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxDelay = options.maxDelayMs ?? 20_000;
  const maxTotalWait = options.maxTotalWaitMs ?? 45_000;
  const sleep = options.sleep ?? defaultSleep;
  let waited = 0;
  for (let attemptNo = 1; ; attemptNo++) {
    if (signal?.aborted) throw abortedError(provider);
    let yielded = false;
    try {
      for await (const event of attempt()) {
        yielded = true;
        yield event;
      }
      return;
    } catch (error) {
      if (signal?.aborted) throw abortedError(provider);
      if (!(error instanceof LlmError)) throw error;
      if (yielded || !(error instanceof LlmAttemptError) || !error.retryable) throw error;
      const delay = error.retryAfterMs ?? backoffMs(attemptNo, options);
      const why =
        attemptNo >= maxAttempts
          ? `after ${attemptNo} attempts`
          : delay > maxDelay
            ? `the provider asked to retry after ${delay} ms, longer than the ${maxDelay} ms we wait`
            : waited + delay > maxTotalWait
              ? `after ${attemptNo} attempts: the ${maxTotalWait} ms retry budget is spent`
              : null;
      if (why !== null) throw new LlmError(error.code, `${error.message} (${why})`, error.status);
      waited += delay;
      options.onRetry?.({ attempt: attemptNo, delayMs: delay, error });
      await sleep(delay, signal);
    }
  }
}
