/**
 * Cron for schedule triggers: `croner` (strict field validation) in the task's
 * IANA time zone (UTC unless the task names one). Only five-field expressions
 * are accepted (minute hour day month weekday): the spec's form, no seconds
 * field, no `@daily` nicknames. Occurrences follow the zone's clock across
 * daylight-saving changes: `0 9 * * *` in Europe/Paris is 09:00 local in
 * winter and in summer.
 */
import { Cron } from 'croner';

export const DEFAULT_TIMEZONE = 'UTC';

/** Why the expression is refused, or null when it is a valid five-field cron. */
export function cronError(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return `cron must have five fields (minute hour day month weekday), got ${fields.length}`;
  try {
    new Cron(expression, { timezone: DEFAULT_TIMEZONE, paused: true });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Why the name is not a time zone, or null when the runtime's ICU knows it (`Europe/Paris`, `UTC`, `America/New_York`...). */
export function timezoneError(name: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return null;
  } catch {
    return `unknown time zone "${name}" (an IANA name such as "Europe/Paris" or "UTC")`;
  }
}

/** The first occurrence strictly after `afterMs` (epoch ms) in `timezone`, or null when the expression never fires again. */
export function nextOccurrence(expression: string, timezone: string, afterMs: number): number | null {
  const next = new Cron(expression, { timezone, paused: true }).nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}
