/**
 * Automatic sync: one croner job per source with a non-empty `schedule`
 * (UTC). Croner validates the expression (strict fields); `protect` skips a
 * fire while the previous one still runs, and the sync itself answers
 * "already running" when a manual sync holds the source.
 */
import { Cron } from 'croner';

/** Checks a cron expression; returns the reason it is refused, or null. */
export function scheduleProblem(expression: string): string | null {
  if (expression === '') return null;
  try {
    const probe = new Cron(expression, { timezone: 'UTC', paused: true });
    const next = probe.nextRun();
    probe.stop();
    return next === null ? 'the schedule never fires' : null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** When a schedule fires next (ISO 8601), or null when it is empty. */
export function nextFireOf(expression: string): string | null {
  if (expression === '' || scheduleProblem(expression) !== null) return null;
  const probe = new Cron(expression, { timezone: 'UTC', paused: true });
  const next = probe.nextRun();
  probe.stop();
  return next?.toISOString() ?? null;
}

export type ScheduledSync = (orgId: string, sourceId: string) => Promise<void>;

export class SyncSchedule {
  private readonly jobs = new Map<string, Cron>();

  constructor(private readonly fire: ScheduledSync) {}

  /** (Re)arms the source's job; an empty schedule disarms it. */
  set(orgId: string, sourceId: string, expression: string): void {
    this.remove(sourceId);
    if (expression === '' || scheduleProblem(expression) !== null) return;
    const job = new Cron(expression, { timezone: 'UTC', protect: true, catch: true }, () => this.fire(orgId, sourceId));
    this.jobs.set(sourceId, job);
  }

  remove(sourceId: string): void {
    this.jobs.get(sourceId)?.stop();
    this.jobs.delete(sourceId);
  }

  get size(): number {
    return this.jobs.size;
  }

  stop(): void {
    for (const job of this.jobs.values()) job.stop();
    this.jobs.clear();
  }
}
