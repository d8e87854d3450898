/**
 * Cron for schedule triggers: `croner` (strict field validation), always UTC.
 * Only five-field expressions are accepted (minute hour day month weekday):
 * the spec's form, no seconds field, no `@daily` nicknames.
 */
import { Cron } from 'croner';

/** Why the expression is refused, or null when it is a valid five-field cron. */
export function cronError(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return `cron must have five fields (minute hour day month weekday), got ${fields.length}`;
  try {
    new Cron(expression, { timezone: 'UTC', paused: true });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The first occurrence strictly after `afterMs` (epoch ms), or null when the expression never fires again. */
export function nextOccurrence(expression: string, afterMs: number): number | null {
  const next = new Cron(expression, { timezone: 'UTC', paused: true }).nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}
