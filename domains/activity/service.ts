/** What /activity, /activity/audit-log and /notifications read and change: the feed, the audit log and each user's inbox. */
import type { Collections } from '../collections.js';
import type { ActivityDoc, AuditEntryDoc, NotificationDoc } from './types.js';
import { ACTIVITY_KINDS } from './types.js';
import { idWindow } from './time-window.js';
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import type { Filter, ListOptions, OrgCollection, OrgId, Page, StoredFields } from '../../runtime/store/types.js';

/** who did it (an id, or a user's email) and when (ISO 8601, both inclusive) */
export interface WindowFilter {
  readonly actor?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}

const READ_ALL_PAGE = 200;

export class ActivityService {
  constructor(private readonly collections: Pick<Collections, 'activity' | 'auditLog' | 'notifications' | 'users'>) {}

  /** the notifications as a read-only listing (pages are cached on its revision) */
  get notificationListing(): Pick<Collections['notifications'], 'list' | 'revision'> {
    return this.collections.notifications;
  }

  /** `kind` is a kind or its family (`run` = `run.started` and `run.ended`) */
  async feed(org: OrgId, options: ListOptions, query: WindowFilter & { readonly kind?: string | undefined }): Promise<Page<ActivityDoc>> {
    const kind: Filter =
      query.kind === undefined
        ? {}
        : query.kind.includes('.')
          ? { kind: query.kind }
          : { kind: { in: ACTIVITY_KINDS.filter((candidate) => candidate.startsWith(`${query.kind}.`)) } };
    return this.windowPage(this.collections.activity, org, options, { ...kind, ...(await this.actorFilter(query.actor)) }, query);
  }

  async auditLog(
    org: OrgId,
    options: ListOptions,
    query: WindowFilter & { readonly kind?: string | undefined; readonly action?: string | undefined },
  ): Promise<Page<AuditEntryDoc>> {
    const filter: Filter = {
      ...(query.kind === undefined ? {} : { kind: query.kind }),
      ...(query.action === undefined ? {} : { action: query.action }),
      ...(await this.actorFilter(query.actor)),
    };
    return this.windowPage(this.collections.auditLog, org, options, filter, query);
  }

  /** marks every unread notification of `user` read; how many were */
  async readAll(org: OrgId, user: string): Promise<number> {
    const { notifications } = this.collections;
    const at = nowIso();
    let updated = 0;
    for (;;) {
      // marked entries leave the filter, so the first page is always the next one
      const page = await notifications.list(org, { limit: READ_ALL_PAGE, filter: { user_id: user, read: false } });
      for (const entry of page.items) await notifications.update(org, entry.id, { read: true, read_at: at });
      updated += page.items.length;
      if (page.nextAfter === null) return updated;
    }
  }

  /** another user's notification is as absent as another organization's */
  async read(org: OrgId, user: string, id: string): Promise<NotificationDoc> {
    const { notifications } = this.collections;
    const entry = await notifications.get(org, id);
    if (!entry || entry.user_id !== user) throw new ServiceError('not_found', `notification ${id} not found`);
    if (entry.read) return entry;
    const updated = await notifications.update(org, entry.id, { read: true, read_at: nowIso() });
    if (!updated) throw new ServiceError('not_found', `notification ${id} not found`);
    return updated;
  }

  /** `actor` as an id, or an email resolved to its user (an unknown email matches nothing) */
  private async actorFilter(actor: string | undefined): Promise<Filter> {
    if (actor === undefined) return {};
    if (!actor.includes('@')) return { actor_id: actor };
    const user = await this.collections.users.findOne({ email: actor.trim().toLowerCase() });
    return { actor_id: user ? user.id : { in: [] } };
  }

  private windowPage<T extends StoredFields>(
    collection: OrgCollection<T>,
    org: OrgId,
    options: ListOptions,
    filter: Filter,
    window: WindowFilter,
  ): Promise<Page<T>> {
    const idRange = idWindow(collection.spec.idPrefix, window.since, window.until);
    return collection.list(org, { ...options, filter: { ...options.filter, ...filter }, ...(idRange === undefined ? {} : { idRange }) });
  }
}
