/**
 * The one recorder of the activity feed, the audit log and notifications.
 * Whatever happens (a run ends, a sync fails, a request changes something)
 * is reported here; writing never throws into the caller: an entry that
 * cannot be written is logged and the work it describes goes on.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import type { OrgId } from '../../runtime/store/types.js';
import { stampedId } from './time-window.js';
import type { ActivityKind, Actor, EntryDetails, NotificationKind, ResourceRef } from './types.js';

export interface ActivityInput {
  readonly kind: ActivityKind;
  readonly actor: Actor;
  readonly subject: ResourceRef;
  readonly summary: string;
  readonly details?: EntryDetails;
}

export interface AuditInput {
  readonly actor: Actor;
  readonly action: string;
  readonly resource: ResourceRef;
  readonly route?: string | null;
  readonly status?: number | null;
  readonly requestId?: string | null;
  readonly details?: EntryDetails;
}

export interface NotificationInput {
  readonly kind: NotificationKind;
  readonly title: string;
  readonly subject: ResourceRef;
  readonly details?: EntryDetails;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, email: null };

/** roles whose members hear of every approval and failed sync of the organization */
const ADMIN_ROLES = ['owner', 'admin'];

export class ActivityRecorder {
  constructor(
    private readonly collections: Collections,
    private readonly logger: Logger,
  ) {}

  /** a user as an actor, with the email they sign in with (null when the user is gone) */
  async userActor(userId: string | null): Promise<Actor> {
    if (userId === null) return SYSTEM_ACTOR;
    const user = await this.collections.users.get(userId).catch(() => null);
    return { type: 'user', id: userId, email: user?.email ?? null };
  }

  async activity(org: OrgId, input: ActivityInput): Promise<void> {
    const { id, at } = stampedId(this.collections.activity.spec.idPrefix);
    await this.safely('activity', org, () =>
      this.collections.activity.insert(org, {
        id,
        at,
        kind: input.kind,
        actor: input.actor,
        actor_id: input.actor.id,
        subject: input.subject,
        summary: input.summary,
        details: input.details ?? {},
      }),
    );
  }

  async audit(org: OrgId, input: AuditInput): Promise<void> {
    const { id, at } = stampedId(this.collections.auditLog.spec.idPrefix);
    await this.safely('audit', org, () =>
      this.collections.auditLog.insert(org, {
        id,
        at,
        actor: input.actor,
        actor_id: input.actor.id,
        action: input.action,
        resource: input.resource,
        kind: input.resource.kind,
        route: input.route ?? null,
        status: input.status ?? null,
        request_id: input.requestId ?? null,
        details: input.details ?? {},
      }),
    );
  }

  /** one notification per user (each named once, null skipped) */
  async notify(org: OrgId, userIds: Iterable<string | null>, input: NotificationInput): Promise<void> {
    for (const userId of new Set(userIds)) {
      if (userId === null) continue;
      const { id, at } = stampedId(this.collections.notifications.spec.idPrefix);
      await this.safely('notification', org, () =>
        this.collections.notifications.insert(org, {
          id,
          at,
          user_id: userId,
          kind: input.kind,
          title: input.title,
          subject: input.subject,
          details: input.details ?? {},
          read: false,
          read_at: null,
        }),
      );
    }
  }

  /** the owners and admins of the organization */
  async admins(org: OrgId): Promise<string[]> {
    const members = await this.collections.memberships.findAll(org, { role: { in: ADMIN_ROLES } }).catch(() => []);
    return members.map((member) => member.user_id);
  }

  private async safely(what: string, org: OrgId, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.logger.error({ err: error, org }, `${what} entry not recorded`);
    }
  }
}
