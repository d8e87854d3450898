/**
 * Bounds the growth of the activity feed, the audit log and notifications:
 * every hour on the runtime clock, entries older than ACTIVITY_RETENTION_DAYS
 * are deleted. Their ids carry their time, so each organization's expired
 * entries are exactly one id range, read oldest first.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { asOrgId, type OrgCollection, type StoredFields } from '../../runtime/store/types.js';
import { HourlySweep } from '../../runtime/hourly-sweep.js';
import type { RuntimeClock } from '../../runtime/supervisor.js';
import { idWindow } from './time-window.js';

const PAGE = 200;

export class ActivitySweeper extends HourlySweep {
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
      const { activity, auditLog, notifications } = this.collections;
      for (const organization of await this.collections.organizations.findAll()) {
        for (const collection of [activity, auditLog, notifications] as OrgCollection<StoredFields>[]) {
          deleted += await this.expire(collection, asOrgId(organization.id), cutoff);
        }
      }
      if (deleted > 0) this.logger.info({ deleted, retention_days: this.retentionDays }, 'expired activity, audit and notification entries deleted');
    } catch (error) {
      this.logger.error({ err: error }, 'activity sweep failed');
    }
    return deleted;
  }

  private async expire(collection: OrgCollection<StoredFields>, org: ReturnType<typeof asOrgId>, cutoff: string): Promise<number> {
    const idRange = idWindow(collection.spec.idPrefix, undefined, new Date(Date.parse(cutoff) - 1).toISOString());
    let deleted = 0;
    for (;;) {
      const page = await collection.list(org, { limit: PAGE, idRange });
      for (const entry of page.items) await collection.delete(org, entry.id);
      deleted += page.items.length;
      if (page.nextAfter === null) return deleted;
    }
  }
}
