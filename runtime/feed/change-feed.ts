/**
 * The change feed: what the WebSocket feed (`/ws`) streams. Writers publish
 * one change at a time (a graph node upserted, a task run ended ...); the
 * feed numbers each organization's changes with a monotonically increasing
 * `seq`, keeps the latest ones in a bounded ring per organization (count and
 * age) for clients resuming after a reconnect, and hands each change to the
 * organization's listeners.
 *
 * A change is announced only once what the writer wrote is durable: it waits
 * for the metadata store's commit barrier (a failed commit drops it), in
 * publishing order, and takes its `seq` then, so the ring, the seq order and
 * the delivery order are one order.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { isoAt, systemClock, type RuntimeClock } from '../clock.js';

type FeedTopic = 'graph' | 'task_runs';

/** what a writer publishes */
export interface FeedChange {
  readonly topic: FeedTopic;
  /** e.g. `node.upserted`, `task_run.ended` */
  readonly event: string;
  /** graph changes: the realm */
  readonly realm?: string;
  /** graph changes: the labels they touch (a node's, a relationship's two ends'); null when unknown (a Cypher write) */
  readonly labels?: readonly string[] | null;
  /** task run changes: the task */
  readonly taskId?: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** a published change as retained and delivered */
export interface FeedEvent extends FeedChange {
  readonly orgId: string;
  readonly seq: number;
  /** ISO 8601, when it was announced */
  readonly at: string;
}

export type FeedListener = (event: FeedEvent) => void;

export interface FeedRetention {
  /** events kept per organization */
  readonly maxEvents: number;
  /** how long an event is kept */
  readonly maxAgeMs: number;
}

/** what a resume from `afterSeq` finds */
export type Replay = { readonly ok: true; readonly events: FeedEvent[] } | { readonly ok: false; readonly oldestSeq: number; readonly latestSeq: number };

/** one organization's numbered, retained events (a ring of fixed capacity) */
class OrgLog {
  seq = 0;
  /** the highest seq no longer retained (0: none dropped yet) */
  droppedThrough = 0;
  readonly listeners = new Set<FeedListener>();
  private readonly ring: (FeedEvent | undefined)[];
  private head = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.ring = new Array<FeedEvent | undefined>(capacity);
  }

  append(event: FeedEvent): void {
    if (this.size === this.capacity) this.dropOldest();
    this.ring[(this.head + this.size) % this.capacity] = event;
    this.size += 1;
  }

  /** drops events announced before `cutoffMs` */
  expire(cutoffMs: number): void {
    while (this.size > 0 && Date.parse((this.ring[this.head] as FeedEvent).at) < cutoffMs) this.dropOldest();
  }

  /** retained events with a seq above `afterSeq`, oldest first */
  after(afterSeq: number): FeedEvent[] {
    const events: FeedEvent[] = [];
    for (let index = 0; index < this.size; index += 1) {
      const event = this.ring[(this.head + index) % this.capacity] as FeedEvent;
      if (event.seq > afterSeq) events.push(event);
    }
    return events;
  }

  private dropOldest(): void {
    const oldest = this.ring[this.head] as FeedEvent;
    this.droppedThrough = oldest.seq;
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size -= 1;
  }
}

export class ChangeFeed {
  /** this process's numbering: seq values of another process (before a restart) mean nothing here */
  readonly stream = randomBytes(8).toString('hex');
  private readonly logs = new Map<string, OrgLog>();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly retention: FeedRetention,
    private readonly logger: Logger,
    /** resolves once what was written so far is durable (null: nothing pending) */
    private readonly committed: () => Promise<void> | null = () => null,
    private readonly clock: Pick<RuntimeClock, 'now'> = systemClock,
  ) {}

  /**
   * Announces the changes once the writes before them are committed; never
   * throws, never waits. An organization no feed connection has listened to
   * since the start costs nothing: no client can hold a seq of it to resume from.
   */
  publish(orgId: string, changes: FeedChange | readonly FeedChange[]): void {
    const log = this.logs.get(orgId);
    if (log === undefined) return;
    const list: readonly FeedChange[] = Array.isArray(changes) ? changes : [changes as FeedChange];
    if (list.length === 0) return;
    const barrier = this.committed();
    const announce = (): void => this.announce(log, orgId, list);
    const dropped = (error: unknown): void => this.logger.warn({ err: error, changes: list.length }, 'feed changes dropped: their write was not committed');
    this.tail = barrier === null ? this.tail.then(announce) : this.tail.then(() => barrier.then(announce, dropped));
  }

  /** whether changes of the organization are numbered and kept (a feed connection of it has listened since the start) */
  watched(orgId: string): boolean {
    return this.logs.has(orgId);
  }

  /** the latest seq of the organization (0 before its first change) */
  latestSeq(orgId: string): number {
    return this.logs.get(orgId)?.seq ?? 0;
  }

  /** the retained events after `afterSeq`, or why they cannot all be given (dropped, or a seq this process never issued) */
  replay(orgId: string, afterSeq: number): Replay {
    const log = this.logs.get(orgId);
    const latestSeq = log?.seq ?? 0;
    if (log) log.expire(this.clock.now() - this.retention.maxAgeMs);
    const droppedThrough = log?.droppedThrough ?? 0;
    if (afterSeq > latestSeq || afterSeq < droppedThrough) return { ok: false, oldestSeq: droppedThrough + 1, latestSeq };
    return { ok: true, events: log ? log.after(afterSeq) : [] };
  }

  /** Calls `listener` with each later change of the organization; returns the unsubscribe function. */
  listen(orgId: string, listener: FeedListener): () => void {
    const log = this.logOf(orgId);
    log.listeners.add(listener);
    return () => log.listeners.delete(listener);
  }

  private announce(log: OrgLog, orgId: string, changes: readonly FeedChange[]): void {
    const now = this.clock.now();
    const at = isoAt(now);
    log.expire(now - this.retention.maxAgeMs);
    for (const change of changes) {
      log.seq += 1;
      const event: FeedEvent = { ...change, orgId, seq: log.seq, at };
      log.append(event);
      for (const listener of log.listeners) {
        try {
          listener(event);
        } catch (error) {
          this.logger.error({ err: error, event: change.event }, 'feed listener failed');
        }
      }
    }
  }

  private logOf(orgId: string): OrgLog {
    let log = this.logs.get(orgId);
    if (!log) {
      log = new OrgLog(this.retention.maxEvents);
      this.logs.set(orgId, log);
    }
    return log;
  }
}
