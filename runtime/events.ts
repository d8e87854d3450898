/**
 * Platform events: the in-process bus that lifecycle-triggered tasks listen
 * to (a source synced, a run failed, an ingest failed ...). Emitters never
 * wait for listeners and never see their failures: a listener that throws is
 * logged and the others still run.
 */
import type { Logger } from 'pino';
import { isoAt, systemClock, type RuntimeClock } from './clock.js';

/** The named platform events a `lifecycle` task trigger may listen to. */
export const PLATFORM_EVENT_TYPES = [
  'source.synced',
  'source.sync_failed',
  'run.succeeded',
  'run.failed',
  'ingest.completed',
  'ingest.failed',
  'task.run_failed',
] as const;

export type PlatformEventType = (typeof PLATFORM_EVENT_TYPES)[number];

export interface PlatformEvent {
  readonly type: PlatformEventType;
  readonly orgId: string;
  /** ISO 8601 */
  readonly at: string;
  /** what happened, as plain JSON (ids, names, error text); a task's template reads it as `trigger.body` */
  readonly data: Readonly<Record<string, unknown>>;
}

export type PlatformEventListener = (event: PlatformEvent) => void | Promise<void>;

export class PlatformEvents {
  private readonly listeners = new Set<PlatformEventListener>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Pick<RuntimeClock, 'now'> = systemClock,
  ) {}

  /** Delivers the event to every listener, asynchronously. */
  emit(type: PlatformEventType, orgId: string, data: Readonly<Record<string, unknown>>): void {
    if (this.listeners.size === 0) return;
    const event: PlatformEvent = { type, orgId, at: isoAt(this.clock.now()), data };
    for (const listener of this.listeners) {
      queueMicrotask(() => {
        Promise.resolve()
          .then(() => listener(event))
          .catch((error: unknown) => this.logger.error({ err: error, event: type }, 'platform event listener failed'));
      });
    }
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: PlatformEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
