/**
 * Deletes inbound deliveries older than WEBHOOK_RETENTION_DAYS, every hour on
 * the runtime clock. Ids sort by creation time, so each organization's
 * deliveries are read oldest first and the sweep stops at the first one
 * still inside the window.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { asOrgId } from '../../runtime/store/types.js';
import type { RuntimeClock } from '../../runtime/supervisor.js';

export const SWEEP_INTERVAL_MS = 3_600_000;
const PAGE = 200;

export class DeliverySweeper {
  private timer: unknown = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly collections: Collections,
    private readonly clock: RuntimeClock,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = (): void => {
      this.timer = this.clock.setTimeout(() => {
        void this.sweep().finally(tick);
      }, SWEEP_INTERVAL_MS);
      // a pending sweep must not keep the process alive
      (this.timer as { unref?: () => void } | null)?.unref?.();
    };
    tick();
  }

  /** Waits for a sweep in progress; no further sweeps. */
  async stop(): Promise<void> {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every organization; returns how many deliveries were deleted. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<number> {
    const cutoff = new Date(this.clock.now() - this.retentionDays * 86_400_000).toISOString();
    let deleted = 0;
    try {
      for (const organization of await this.collections.organizations.findAll()) {
        const org = asOrgId(organization.id);
        for (;;) {
          const page = await this.collections.inboundDeliveries.list(org, { limit: PAGE, after: null });
          const expired = page.items.filter((delivery) => delivery.received_at < cutoff);
          for (const delivery of expired) await this.collections.inboundDeliveries.delete(org, delivery.id);
          deleted += expired.length;
          if (expired.length < page.items.length || page.nextAfter === null) break;
        }
      }
      if (deleted > 0) this.logger.info({ deleted, retention_days: this.retentionDays }, 'expired webhook deliveries deleted');
    } catch (error) {
      this.logger.error({ err: error }, 'webhook delivery sweep failed');
    }
    return deleted;
  }
}
