import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { FAULT_TABLES_PAGE, publishFaultTables, readRows, resetRows, TABLE_FILE, tables } from './report.js';

/**
 * Builds the app the suite runs as a child process; afterwards prints the table of all
 * scenarios, and with FAULTS_PUBLISH=1 (a full run) puts them in {@link FAULT_TABLES_PAGE}.
 */
export default function setup(): () => void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  resetRows();
  return () => {
    const rows = readRows();
    const text = tables(rows);
    writeFileSync(TABLE_FILE, `${text}\n`);
    if (process.env.FAULTS_PUBLISH) publishFaultTables(rows);
    process.stdout.write(
      `\nFault suite (${new Date().toISOString()}):\n\n${text}\n\nWritten to ${TABLE_FILE}\n`,
    );
  };
}
