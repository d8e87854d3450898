/**
 * The one way a suite waits for something the server does in the background:
 * re-reads until `read` gives a value (anything but undefined), and fails
 * naming `what` once `timeout` ms have passed. A wait, not a timing assertion.
 */
export interface EventuallyOptions {
  /** what the test waits for, for the failure message */
  readonly what?: string;
  /** @default 10000 */
  readonly timeout?: number;
  /** ms between reads; @default 20 */
  readonly interval?: number;
}

export async function eventually<T>(read: () => Promise<T | undefined> | T | undefined, options: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeout ?? 10_000);
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`gave up waiting for ${options.what ?? 'a value'}`);
    await pause(options.interval ?? 20);
  }
}

/** Lets the server's background work run for `ms` (a settle, not a wait for a condition). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
