/**
 * Source syncs reach the feed from the platform events the source service
 * already emits; a failed sync also notifies the organization's owners and
 * admins.
 */
import type { PlatformEvent, PlatformEvents } from '../../runtime/events.js';
import { asOrgId } from '../../runtime/store/types.js';
import { SYSTEM_ACTOR, type ActivityRecorder } from './record.js';

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

async function onEvent(recorder: ActivityRecorder, event: PlatformEvent): Promise<void> {
  if (event.type !== 'source.synced' && event.type !== 'source.sync_failed') return;
  const org = asOrgId(event.orgId);
  const failed = event.type === 'source.sync_failed';
  const error = event.data['error'];
  const code = error !== null && typeof error === 'object' && 'code' in error ? text(error.code) : null;
  const name = text(event.data['source_name']) ?? text(event.data['source_id']) ?? 'a source';
  const subject = { kind: 'source', id: text(event.data['source_id']) };
  const details = {
    source_id: subject.id,
    source_name: text(event.data['source_name']),
    connector: text(event.data['connector']),
    job_id: text(event.data['job_id']),
    ...(failed ? { error_code: code } : { nodes: Number(event.data['nodes'] ?? 0), relationships: Number(event.data['relationships'] ?? 0) }),
  };
  await recorder.activity(org, {
    kind: failed ? 'source.sync_failed' : 'source.sync_succeeded',
    actor: SYSTEM_ACTOR,
    subject,
    summary: failed ? `sync of ${name} failed${code ? ` (${code})` : ''}` : `sync of ${name} succeeded`,
    details,
  });
  if (failed) {
    await recorder.notify(org, await recorder.admins(org), { kind: 'source.sync_failed', title: `Sync of ${name} failed`, subject, details });
  }
}

/** Returns the unsubscribe function. */
export function followSourceSyncs(recorder: ActivityRecorder, events: PlatformEvents): () => void {
  return events.subscribe((event) => onEvent(recorder, event));
}
