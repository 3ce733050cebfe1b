import { round } from './stats.js';

/** Whether a target was met; "not measured" when a reading it needs is missing (never met). */
export type Verdict = 'yes' | 'no' | 'not measured';

/** A row of the report's table: a figure, its baseline, their ratio and the target. */
export interface Row {
  measure: string;
  ours: string;
  baseline: string;
  ratio: string;
  target: string;
  /** Whom the target serves (who feels the figure), or why a figure is only reported. */
  serves?: string;
  /** Undefined: reported, with no target. */
  met: Verdict | undefined;
}

export const NOT_MEASURED = 'not measured';
export const measured = (...values: number[]) => values.every((v) => Number.isFinite(v));
/** The verdict on a target: "not measured" unless every reading it rests on is there. */
export const judge = (readings: number[], pass: () => boolean): Verdict =>
  !measured(...readings) ? NOT_MEASURED : pass() ? 'yes' : 'no';
export const ms = (n: number) => (measured(n) ? `${round(n, 1)} ms` : NOT_MEASURED);
export const s = (n: number) => (measured(n) ? `${round(n / 1_000, 1)} s` : NOT_MEASURED);
export const x = (n: number) => (measured(n) ? `${round(n)}x` : NOT_MEASURED);
