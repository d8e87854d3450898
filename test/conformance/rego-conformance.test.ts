/**
 * OPA's own conformance cases (test/cases/testdata/v1) against the Rego engine. The ratchet: at
 * least MIN_PASSED cases pass, and the cases that fail are exactly those in known-failures.json
 * (a newly failing case fails this suite, and so does a listed case that now passes).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CASES_DIR, runAll, tally } from '../../runtime/policy/conformance/runner.js';

const MIN_PASSED = 594;
const MAX_SKIPPED = 0;
const known = JSON.parse(readFileSync(new URL('./rego/known-failures.json', import.meta.url), 'utf8')) as { note: string; reason: string }[];

if (!existsSync(CASES_DIR)) {
  console.log(`SKIP OPA v1 conformance: the cases are not at ${CASES_DIR} (shared/ beside the checkout)`);
}

describe.runIf(existsSync(CASES_DIR))('OPA v1 conformance', () => {
  const results = existsSync(CASES_DIR) ? runAll() : [];
  const { total } = tally(results);
  // not report(): its "N passed, N failed" lines would read like the CI run's own closing line
  if (results.length > 0)
    console.log(`OPA v1 conformance: ${total.passed} of ${results.length} cases pass (${total.failed} failing, ${total.skipped} skipped)`);

  it('covers all 594 upstream cases', () => {
    expect(results).toHaveLength(594);
  });

  it(`passes at least ${MIN_PASSED} cases and skips at most ${MAX_SKIPPED}`, () => {
    expect(total.passed).toBeGreaterThanOrEqual(MIN_PASSED);
    expect(total.skipped).toBeLessThanOrEqual(MAX_SKIPPED);
  });

  it('fails exactly the cases listed in known-failures.json', () => {
    const failing = results
      .filter((r) => r.outcome.status === 'fail')
      .map((r) => `${r.note} :: ${r.outcome.status === 'fail' ? r.outcome.reason.slice(0, 300) : ''}`);
    const failingNotes = results
      .filter((r) => r.outcome.status === 'fail')
      .map((r) => r.note)
      .sort();
    expect(failingNotes, failing.join('\n')).toEqual(known.map((k) => k.note).sort());
  });

  for (const folder of [...new Set(results.map((r) => r.folder))]) {
    it(`${folder}: no unexpected failures`, () => {
      const unexpected = results.filter((r) => r.folder === folder && r.outcome.status === 'fail' && !known.some((k) => k.note === r.note));
      expect(unexpected.map((r) => `${r.note}: ${r.outcome.status === 'fail' ? r.outcome.reason : ''}`)).toEqual([]);
    });
  }
});
