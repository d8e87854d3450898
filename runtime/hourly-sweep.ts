/**
 * A retention sweep run every hour on the runtime clock (tests move a
 * simulated one): one pass at a time, a pending timer never keeps the process
 * alive, and `stop` waits for a pass in progress. A subclass writes the pass,
 * which says how many entries it deleted.
 */
import type { RuntimeClock } from './supervisor.js';

const SWEEP_INTERVAL_MS = 3_600_000;

export abstract class HourlySweep {
  private timer: unknown = null;
  private running: Promise<number> | null = null;

  constructor(protected readonly clock: RuntimeClock) {}

  /** one pass over every organization; never throws (a failure is logged), returns how many entries went */
  protected abstract pass(): Promise<number>;

  /** the ISO time `days` before now on the runtime clock: what was stamped before it is expired */
  protected cutoff(days: number): string {
    return new Date(this.clock.now() - days * 86_400_000).toISOString();
  }

  start(): void {
    const tick = (): void => {
      this.timer = this.clock.setTimeout(() => void this.sweep().finally(tick), SWEEP_INTERVAL_MS);
      (this.timer as { unref?: () => void } | null)?.unref?.();
    };
    tick();
  }

  /** Waits for a pass in progress; no further passes. */
  async stop(): Promise<void> {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass now (or the one in progress); how many entries it deleted. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }
}
