/**
 * `npm run bench:report`: publishes a run. Copies its raw report (`BENCH_REPORT`, default
 * reports/bench.json, as `npm run bench` writes it) to docs/benchmarks/last-run.json and
 * regenerates from it the table in docs/benchmarks.md and the summary in the README.
 * `BENCH_REPORT=docs/benchmarks/last-run.json` regenerates them from the published run.
 * `BENCH_PART=reports/bench-<part>.json` publishes a part measured in a run of its own
 * (`BENCH_ONLY=<part> npm run bench`: busy, pace, economy or cpu) into the published report,
 * with that run's own record.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { it } from 'vitest';
import { GENERATED, PUBLISHED_REPORT, readReport, replaceBlock, withPart } from './publish.js';

it('publishes the raw report and the figures generated from it', () => {
  const source = resolve(process.env.BENCH_REPORT ?? 'reports/bench.json');
  const part = process.env.BENCH_PART;
  const report = part
    ? withPart(readReport(PUBLISHED_REPORT), readReport(resolve(part)))
    : readReport(source);
  if (part || source !== resolve(PUBLISHED_REPORT))
    writeFileSync(PUBLISHED_REPORT, `${JSON.stringify(report, null, 2)}\n`);
  for (const { file, block, render } of GENERATED)
    writeFileSync(file, replaceBlock(readFileSync(file, 'utf8'), block, render(report)));
  process.stdout.write(
    `Published ${part ?? source} to ${PUBLISHED_REPORT}, ${GENERATED.map((g) => g.file).join(', ')}\n`,
  );
});
