/**
 * `npm run mutate [-- name…]`: mutation testing (Stryker) of the rules that guard people, one
 * module at a time against the tests that hold it, so that each score says what those tests
 * catch. Writes the figures and every surviving mutant to docs/mutation/summary.json (merged
 * with the modules not run this time) and Stryker's reports to reports/mutation/. Slow: not part
 * of `npm test` or CI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { Stryker } from '@stryker-mutator/core';

/** Each module, and the test files that hold it. */
export const MODULES = {
  links: {
    mutate: ['src/slack/links.ts'],
    testFiles: ['test/slack/links.test.ts', 'test/blocks/renderers.property.test.ts'],
  },
  mrkdwn: {
    mutate: ['src/slack/mrkdwn.ts'],
    testFiles: ['test/slack/mrkdwn.test.ts', 'test/blocks/renderers.property.test.ts'],
  },
  access: {
    mutate: ['src/access/**/*.ts'],
    testFiles: ['test/access/*.test.ts'],
  },
  // A new job's recording: the kernel's, and each place one starts from (a comma splits the lists).
  accept: {
    mutate: [
      'src/jobs/start/accept.ts',
      'src/features/command/record.ts',
      'src/features/messages/record.ts',
      'src/features/shortcut/record.ts',
      'src/features/workflow-steps/record.ts',
    ],
    testFiles: [
      'test/jobs/start/accept.test.ts',
      'test/features/command/record.test.ts',
      'test/features/messages/record.test.ts',
      'test/features/shortcut/record.test.ts',
      'test/features/workflow-steps/record.test.ts',
      // A step's refusal and its wait are answered through its listener.
      'test/features/workflow-steps/listener.test.ts',
      // What each place counts when the store cannot record its job.
      'test/http/not-recorded.test.ts',
    ],
  },
  // The loop, and the sending of the kinds whose delivery must not post twice or be lost.
  outbox: {
    mutate: [
      'src/delivery/outbox.ts',
      'src/delivery/outbox-registry.ts',
      'src/delivery/kinds/thread-post.ts',
      'src/delivery/kinds/card-update.ts',
      'src/delivery/kinds/reaction.ts',
      'src/delivery/kinds/private-note.ts',
    ],
    testFiles: ['test/delivery/**/*.test.ts'],
  },
  // The batching window is held by the unit tests, on fake timers. The app-level follow-up tests
  // wait on real timers: on two shared cores they time out under the instrumented code, and one
  // (a refused batch) failed Stryker's initial run, so they are not used here.
  'follow-ups': {
    mutate: ['src/jobs/follow-ups.ts'],
    // The reply checks drop a refused reply through this module's dropRun.
    testFiles: ['test/jobs/follow-ups.test.ts', 'test/jobs/replies.test.ts'],
  },
};

const SUMMARY = 'docs/mutation/summary.json';

/** Stryker's counts for one module; the score counts time-outs as caught, as Stryker does. */
function figures(results) {
  const count = (status) => results.filter((r) => r.status === status).length;
  const killed = count('Killed');
  const survived = count('Survived');
  const timedOut = count('Timeout');
  const noCoverage = count('NoCoverage');
  const errors = count('CompileError') + count('RuntimeError');
  const valid = killed + survived + timedOut + noCoverage;
  return {
    mutants: results.length,
    killed,
    survived,
    timedOut,
    noCoverage,
    errors,
    score: valid === 0 ? null : Math.round(((killed + timedOut) / valid) * 10_000) / 100,
  };
}

const survivors = (results) =>
  results
    .filter((r) => r.status === 'Survived' || r.status === 'NoCoverage')
    .map((r) => ({
      id: r.id,
      status: r.status,
      // A module may span several files: the line is the file's.
      file: relative(process.cwd(), r.fileName),
      line: r.location.start.line,
      mutator: r.mutatorName,
      replacement: r.replacement,
    }))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);

const names = process.argv.slice(2);
for (const name of names)
  if (!(name in MODULES))
    throw new Error(`unknown module ${name}; one of ${Object.keys(MODULES).join(', ')}`);

let summary = {};
try {
  summary = JSON.parse(readFileSync(SUMMARY, 'utf8'));
} catch {
  // First run: nothing to merge with.
}
for (const name of names.length > 0 ? names : Object.keys(MODULES)) {
  const { mutate, testFiles } = MODULES[name];
  // The mutate config reads which tests to run (see vitest.mutate.config.ts).
  process.env.MUTATE_TESTS = testFiles.join(',');
  const results = await new Stryker({
    mutate,
    htmlReporter: { fileName: `reports/mutation/${name}.html` },
    jsonReporter: { fileName: `reports/mutation/${name}.json` },
  }).runMutationTest();
  summary[name] = {
    files: mutate,
    testFiles,
    command: `MUTATE_TESTS='${testFiles.join(',')}' npx stryker run --mutate '${mutate.join(',')}'`,
    measuredAt: new Date().toISOString().slice(0, 10),
    ...figures(results),
    survivors: survivors(results),
  };
  writeFileSync(SUMMARY, `${JSON.stringify(summary, null, 2)}\n`);
}
