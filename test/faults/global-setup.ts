import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { table } from './ledger.js';
import { readRows, resetRows, TABLE_FILE } from './report.js';

/** Builds the app the suite runs as a child process; afterwards prints the table of all scenarios. */
export default function setup(): () => void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  resetRows();
  return () => {
    const rows = readRows();
    const groups = [...new Set(rows.map((r) => r.group))];
    const text = groups.map((g) => `### ${g}\n\n${table(rows.filter((r) => r.group === g))}`).join('\n\n');
    writeFileSync(TABLE_FILE, `${text}\n`);
    process.stdout.write(
      `\nFault suite (${new Date().toISOString()}):\n\n${text}\n\nWritten to ${TABLE_FILE}\n`,
    );
  };
}
