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
import { HourlySweep } from '../../runtime/hourly-sweep.js';

const PAGE = 200;

export class DeliverySweeper extends HourlySweep {
  constructor(
    private readonly collections: Collections,
    clock: RuntimeClock,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {
    super(clock);
  }

  protected async pass(): Promise<number> {
    const cutoff = this.cutoff(this.retentionDays);
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
