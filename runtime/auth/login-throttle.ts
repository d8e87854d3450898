/**
 * Failed-login throttling, in memory (per process: behind several processes
 * each keeps its own counts). Failures are counted per account (email) and
 * per client address in a window; reaching the limit locks that account or
 * address for the window, and each further lockout before a success doubles
 * it (capped at a day). A success clears the account's record. Time comes
 * from the injected clock so tests move it instead of sleeping.
 */

export interface LoginThrottleLimits {
  /** failures of one account per window before a lockout; 0 = not counted */
  readonly accountFailures: number;
  /** failures from one address per window before a lockout; 0 = not counted */
  readonly addressFailures: number;
  readonly windowSeconds: number;
}

interface Counter {
  failures: number;
  windowStartMs: number;
  lockedUntilMs: number;
  lockouts: number;
}

const MAX_LOCKOUT_MS = 86_400_000;
/** records kept before idle ones are swept (bounded memory under a flood of names) */
const MAX_RECORDS = 100_000;

/** One side of the throttle (accounts or addresses). */
class FailureCounter {
  private readonly records = new Map<string, Counter>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds the key stays locked; 0 when it may try. */
  lockedFor(key: string, now: number): number {
    const record = this.records.get(key);
    return record === undefined ? 0 : Math.max(0, record.lockedUntilMs - now);
  }

  fail(key: string, now: number): void {
    if (this.limit === 0) return;
    let record = this.records.get(key);
    if (record === undefined) {
      if (this.records.size >= MAX_RECORDS) this.sweep(now);
      record = { failures: 0, windowStartMs: now, lockedUntilMs: 0, lockouts: 0 };
      this.records.set(key, record);
    }
    if (now - record.windowStartMs >= this.windowMs) {
      record.failures = 0;
      record.windowStartMs = now;
    }
    record.failures += 1;
    if (record.failures >= this.limit) {
      record.lockouts += 1;
      record.lockedUntilMs = now + Math.min(MAX_LOCKOUT_MS, this.windowMs * 2 ** (record.lockouts - 1));
      record.failures = 0;
      record.windowStartMs = now;
    }
  }

  clear(key: string): void {
    this.records.delete(key);
  }

  /** forgets records neither locked nor counting in a live window */
  private sweep(now: number): void {
    for (const [key, record] of this.records) {
      if (record.lockedUntilMs <= now && now - record.windowStartMs >= Math.max(this.windowMs, MAX_LOCKOUT_MS)) this.records.delete(key);
    }
    // still full (a flood inside one window): start over rather than grow
    if (this.records.size >= MAX_RECORDS) this.records.clear();
  }
}

export class LoginThrottle {
  private readonly accounts: FailureCounter;
  private readonly addresses: FailureCounter;

  constructor(
    limits: LoginThrottleLimits,
    private readonly now: () => number,
  ) {
    const windowMs = limits.windowSeconds * 1000;
    this.accounts = new FailureCounter(limits.accountFailures, windowMs);
    this.addresses = new FailureCounter(limits.addressFailures, windowMs);
  }

  /** Whole seconds until this account and address may try again; 0 = now. */
  retryAfterSeconds(account: string, address: string): number {
    const now = this.now();
    const ms = Math.max(this.accounts.lockedFor(account, now), this.addresses.lockedFor(address, now));
    return Math.ceil(ms / 1000);
  }

  failed(account: string, address: string): void {
    const now = this.now();
    this.accounts.fail(account, now);
    this.addresses.fail(address, now);
  }

  /** A success clears the account (not the address: one good password must not unlock a spray from it). */
  succeeded(account: string): void {
    this.accounts.clear(account);
  }
}
