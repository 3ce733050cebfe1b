import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockIn, GENERATED, readReport, rendered, withPart } from '../bench/publish.js';
import { type BenchResults, judge, markdown, rows } from '../bench/report.js';

describe('published benchmark figures', () => {
  const report = readReport();

  for (const { file, block, render } of GENERATED)
    it(`${file} shows exactly the figures of the committed raw report`, () => {
      const text = readFileSync(file, 'utf8');
      expect(blockIn(text, block), `${file} has no generated block ${block}`).toBeDefined();
      expect(blockIn(text, block)).toBe(rendered(block, render(report)));
    });

  it('the committed report says where, when and how it was made, and each part run on its own', () => {
    expect(report.run.command).toBe('npm run bench');
    expect(report.run.commit).toMatch(/^[0-9a-f]{7,}$/);
    expect(report.run.loadAverageAtStart).toHaveLength(3);
    expect(report.run.cores).toBeGreaterThan(0);
    for (const part of Object.values(report.partRuns ?? {})) {
      expect(part.command).toMatch(/^BENCH_ONLY=\w+ npm run bench$/);
      expect(part.commit).toMatch(/^[0-9a-f]{7,}$/);
    }
  });

  it('publishes a part run on its own with its own record, keeping the other parts', () => {
    const base: BenchResults = structuredClone(report);
    delete base.busy;
    delete base.partRuns;
    // A run of the busy part alone, as committed (its settings list every part's defaults).
    const alone = readReport('docs/benchmarks/busy-workspace-2026-11-27-before.json');
    const busyRun = { ...alone.run, command: 'BENCH_ONLY=busy npm run bench', commit: 'abc1234' };
    const part = { ...alone, run: busyRun, settings: { ...alone.settings, latencyMs: 99 } };
    const merged = withPart(base, part);
    expect(merged.flood).toEqual(base.flood);
    expect(merged.run).toEqual(base.run);
    expect(merged.settings).toEqual({
      ...base.settings,
      busyRate: 60,
      busyMinutes: 5,
      busyLatencyMs: 100,
      busySideBySide: 1,
    });
    expect(merged.busy).toEqual(alone.busy);
    expect(merged.partRuns).toEqual({ busy: busyRun });
    expect(markdown(merged)).toContain('The `busy` part was measured in a run of its own: commit abc1234');
    expect(() => withPart(base, { ...part, busy: undefined })).toThrow(/no part to publish/);
  });

  /** A report of a run of one part alone, its settings every part's as that run had them. */
  const alone = (name: string, fields: Partial<BenchResults>, settings: Record<string, number>) =>
    ({
      run: { ...report.run, command: `BENCH_ONLY=${name} npm run bench`, commit: `${name}000` },
      settings: { ...report.settings, commands: 1, busyRate: 1, ...settings },
      ...fields,
    }) as BenchResults;

  it('publishes any part measured alone, under its own key, keeping the parts published before', () => {
    // The committed report, with the parts published from runs of their own, as today.
    const published: BenchResults = structuredClone(report);
    const economy = { ...report.economy, ours: { ...report.economy.ours, getsPerJob: 1.5 } };
    const merged = withPart(
      published,
      alone('economy', { economy }, { economyJobs: 7, economyTimeScale: 0.5 }),
    );
    expect(merged.economy).toEqual(economy);
    expect(merged.cpu).toEqual(report.cpu);
    expect(merged.busy).toEqual(report.busy);
    // Only the part's own settings: another part's, as that run had them, are not the published run's.
    expect(merged.settings).toEqual({ ...report.settings, economyJobs: 7, economyTimeScale: 0.5 });
    expect(Object.keys(merged.partRuns ?? {}).sort()).toEqual(
      [...new Set([...Object.keys(report.partRuns ?? {}), 'economy'])].sort(),
    );
    expect(merged.partRuns?.economy?.commit).toBe('economy000');
    expect(merged.partRuns?.busy).toEqual(report.partRuns?.busy);
    const cpu = { ...report.cpu, ours: { ...report.cpu.ours, cpuMsPerJob: 0.5 } };
    const twice = withPart(merged, alone('cpu', { cpu }, { cpuJobs: 9 }));
    expect(twice.cpu).toEqual(cpu);
    expect(twice.economy).toEqual(economy);
    expect(twice.settings.cpuJobs).toBe(9);
    // The footer names every part run on its own.
    for (const name of Object.keys(twice.partRuns ?? {}))
      expect(markdown(twice)).toContain(`The \`${name}\` part was measured in a run of its own`);
  });

  it('refuses a part report that is a full run, or a part measured with another shared setting', () => {
    const published: BenchResults = structuredClone(report);
    expect(() => withPart(published, published)).toThrow(/several parts \(cpu, economy/);
    const cpuAlone = alone(
      'cpu',
      { cpu: report.cpu },
      { latencyMs: Number(report.settings.latencyMs) + 100 },
    );
    expect(() => withPart(published, cpuAlone)).toThrow(/cpu part was measured with latencyMs=/);
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
