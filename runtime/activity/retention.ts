/**
 * Bounds the growth of the activity feed, the audit log and notifications:
 * every hour on the runtime clock, entries older than ACTIVITY_RETENTION_DAYS
 * are deleted. Their ids carry their time, so each organization's expired
 * entries are exactly one id range, read oldest first.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { asOrgId, type OrgCollection, type StoredFields } from '../store/types.js';
import type { RuntimeClock } from '../supervisor.js';
import { idWindow } from './time-window.js';

export const ACTIVITY_SWEEP_INTERVAL_MS = 3_600_000;
const PAGE = 200;
const DAY_MS = 86_400_000;

export class ActivitySweeper {
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
      this.timer = this.clock.setTimeout(() => void this.sweep().finally(tick), ACTIVITY_SWEEP_INTERVAL_MS);
      // a pending sweep must not keep the process alive
      (this.timer as { unref?: () => void } | null)?.unref?.();
    };
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every organization; returns how many entries were deleted. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<number> {
    const cutoff = new Date(this.clock.now() - this.retentionDays * DAY_MS).toISOString();
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
