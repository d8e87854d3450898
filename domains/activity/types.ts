/**
 * The documents of the activity feed, the audit log and notifications. Each
 * holds ids, names, statuses and short reasons only: never a request body,
 * an argument value or a secret.
 */
import type { StoredFields } from '../../runtime/store/types.js';

/** Who did it: a person, an API key (its id; its creator as `user_id`), or the service itself. */
export interface Actor {
  readonly type: 'user' | 'api_key' | 'system';
  readonly id: string | null;
  readonly email: string | null;
}

export interface ResourceRef {
  readonly kind: string;
  readonly id: string | null;
}

/** Plain facts about an entry: ids, names, statuses, reasons; never bodies or secrets. */
export type EntryDetails = Readonly<Record<string, string | number | boolean | null>>;

export const ACTIVITY_KINDS = [
  'run.started',
  'run.ended',
  'approval.requested',
  'approval.decided',
  'webhook.delivery_succeeded',
  'webhook.delivery_failed',
  'source.sync_succeeded',
  'source.sync_failed',
  'policy.changed',
] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** One entry of the organization's feed (`GET /activity`). */
export interface ActivityDoc extends StoredFields {
  readonly kind: ActivityKind;
  readonly actor: Actor;
  /** `actor.id`, top level for the filter index */
  readonly actor_id: string | null;
  /** what it is about: a run, an approval, a delivery, a source, a policy */
  readonly subject: ResourceRef;
  readonly summary: string;
  readonly details: EntryDetails;
  readonly at: string;
}

/** One entry of the audit log (`GET /activity/audit-log`): who changed what. */
export interface AuditEntryDoc extends StoredFields {
  readonly actor: Actor;
  readonly actor_id: string | null;
  /** `create`, `update`, `delete`, `login`, `login_failed`, `rotate`, `deny`, a route's verb ... */
  readonly action: string;
  readonly resource: ResourceRef;
  /** `resource.kind`, top level for the filter index */
  readonly kind: string;
  /** the route pattern, e.g. `PATCH /realms/:id`; null when not from a request (a policy denial in a run) */
  readonly route: string | null;
  readonly status: number | null;
  readonly request_id: string | null;
  readonly details: EntryDetails;
  readonly at: string;
}

export const NOTIFICATION_KINDS = ['approval.requested', 'run.failed', 'source.sync_failed'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** A notification for one user of the organization (`/notifications`). */
export interface NotificationDoc extends StoredFields {
  readonly user_id: string;
  readonly kind: NotificationKind;
  readonly title: string;
  readonly subject: ResourceRef;
  readonly details: EntryDetails;
  readonly read: boolean;
  readonly read_at: string | null;
  readonly at: string;
}
