import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockIn, GENERATED, readReport, rendered } from '../bench/publish.js';
import { type BenchResults, judge, rows } from '../bench/report.js';

describe('published benchmark figures', () => {
  const report = readReport();

  for (const { file, block, render } of GENERATED)
    it(`${file} shows exactly the figures of the committed raw report`, () => {
      const text = readFileSync(file, 'utf8');
      expect(blockIn(text, block), `${file} has no generated block ${block}`).toBeDefined();
      expect(blockIn(text, block)).toBe(rendered(block, render(report)));
    });

  it('the committed report says where, when and how it was made', () => {
    expect(report.run.command).toBe('npm run bench');
    expect(report.run.commit).toMatch(/^[0-9a-f]{7,}$/);
    expect(report.run.loadAverageAtStart).toHaveLength(3);
    expect(report.run.cores).toBeGreaterThan(0);
  });

  it('a missing reading is "not measured", never met', () => {
    expect(judge([Number.NaN], () => true)).toBe('not measured');
    expect(judge([1, Number.POSITIVE_INFINITY], () => true)).toBe('not measured');
    expect(judge([1], () => true)).toBe('yes');
    expect(judge([1], () => false)).toBe('no');
    // A failed memory reading and a run that saw no GET at all.
    const broken: BenchResults = structuredClone(report);
    broken.scale.peakRssBytes = 0;
    broken.scale.getsPerSecond = 0;
    broken.scale.busiestSecond = 0;
    const verdicts = Object.fromEntries(rows(broken).map((r) => [r.measure, r.met]));
    expect(verdicts[`peak RSS with ${report.settings.scaleJobs} running jobs`]).toBe('not measured');
    expect(verdicts['upstream GETs per second: mean / busiest second']).toBe('not measured');
  });
});
