import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Counts } from './ledger.js';

/** Rows of the fault suite's table, collected across test files. */
export const REPORT_DIR = resolve('reports');
export const ROWS_FILE = resolve(REPORT_DIR, 'fault-rows.jsonl');
export const TABLE_FILE = resolve(REPORT_DIR, 'faults.md');

export function resetRows(): void {
  mkdirSync(REPORT_DIR, { recursive: true });
  rmSync(ROWS_FILE, { force: true });
}

export function recordRow(group: string, scenario: string, counts: Counts, details: string[]): void {
  mkdirSync(REPORT_DIR, { recursive: true });
  appendFileSync(ROWS_FILE, `${JSON.stringify({ group, scenario, counts, details })}\n`);
}

export function readRows(): { group: string; scenario: string; counts: Counts; details: string[] }[] {
  try {
    return readFileSync(ROWS_FILE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}
