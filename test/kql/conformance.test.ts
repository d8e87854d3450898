/**
 * The KQL conformance kit as a regression floor: the deterministic cases of
 * ../shared/conformance/kql run through the service's KQL path; the pass rate
 * must not fall below the floor (raise it as coverage grows).
 */
import { describe, expect, it } from 'vitest';
import { runConformance } from './conformance.js';

const FLOOR_PERCENT = 95;

describe('KQL conformance kit', () => {
  it(`passes at least ${FLOOR_PERCENT}% of the deterministic cases`, async () => {
    const report = await runConformance();
    const percent = (100 * report.passed) / report.total;
    expect(report.total).toBeGreaterThan(1400);
    expect(percent).toBeGreaterThanOrEqual(FLOOR_PERCENT);
  }, 600_000);
});
