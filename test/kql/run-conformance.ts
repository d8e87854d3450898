/** `npm run test:kql-conformance`: pass counts per operator family and in total; `--failures` lists what failed. */
import { runConformance } from './conformance.js';

const report = await runConformance();
const rows = Object.entries(report.families).sort((a, b) => b[1].total - a[1].total);
for (const [family, { total, passed }] of rows)
  console.log(`${family.padEnd(16)} ${String(passed).padStart(5)} / ${String(total).padEnd(5)} ${((100 * passed) / total).toFixed(1)}%`);
if (process.argv.includes('--failures')) for (const failure of report.failures) console.log(`FAIL ${failure.id}: ${failure.reason}`);
console.log(JSON.stringify({ total: report.total, passed: report.passed, percent: Number(((100 * report.passed) / report.total).toFixed(1)) }));
