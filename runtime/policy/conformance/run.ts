/** CLI: `npm run test:rego-conformance [-- --verbose]` prints per-folder and total figures. */
import { CASES_DIR, report, runAll } from './runner.js';

const verbose = process.argv.includes('--verbose');
const dir = process.argv.find((a, i) => i > 1 && !a.startsWith('--')) ?? CASES_DIR;
const results = runAll(dir);
if (verbose) {
  for (const r of results) if (r.outcome.status === 'fail') console.log(`FAIL ${r.folder}/${r.file} ${r.note}\n  ${r.outcome.reason.slice(0, 600)}`);
}
console.log(report(results));
