import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyCounts } from './ledger.js';
import { END, FAULT_TABLES_PAGE, GROUP_ORDER, publishFaultTables, START } from './report.js';

const GROUPS = GROUP_ORDER;
const row = (group: string) => ({
  group,
  scenario: `killed in ${group}`,
  counts: { ...emptyCounts(), runs: 1, given: 1, jobsCreated: 1 },
  details: [],
});

/** A copy of the published page, so the test never writes the real one. */
function copyOfPage(): string {
  const page = join(mkdtempSync(join(tmpdir(), 'fault-tables-')), 'guarantees.md');
  copyFileSync(FAULT_TABLES_PAGE, page);
  return page;
}

describe('publishing the fault tables', () => {
  it('replaces only what lies between the markers, one table per group under ### headings', () => {
    const page = copyOfPage();
    const before = readFileSync(page, 'utf8');
    publishFaultTables(GROUPS.map(row), page);
    const after = readFileSync(page, 'utf8');
    expect(after.slice(0, after.indexOf(START))).toBe(before.slice(0, before.indexOf(START)));
    expect(after.slice(after.indexOf(END))).toBe(before.slice(before.indexOf(END)));
    const block = after.slice(after.indexOf(START), after.indexOf(END));
    for (const group of GROUPS) expect(block).toContain(`\n### ${group}\n\n| scenario |`);
    expect(block).toContain('| killed in Slack faults | 1 | 1 | 1 |');
  });

  it('refuses a partial run and leaves the page as it was', () => {
    const page = copyOfPage();
    const before = readFileSync(page, 'utf8');
    expect(() => publishFaultTables(GROUPS.slice(1).map(row), page)).toThrow(/Agent API faults/);
    expect(readFileSync(page, 'utf8')).toBe(before);
  });
});
