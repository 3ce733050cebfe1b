import { describe, expect, it } from 'vitest';
import { type StatusFacts, statusReport } from '../../../src/features/command/status-report.js';
import { blockProblems } from '../../helpers/block-kit.js';

const NOW = 1_800_000_000_000;
const facts = (fields: Partial<StatusFacts> = {}): StatusFacts => ({
  projects: ['proj_docs'],
  defaultProject: 'proj_docs',
  used: [],
  activeJobs: 0,
  pollerRunning: true,
  lastAgentSuccessAt: NOW - 30_000,
  startedAt: NOW - 3_600_000,
  instances: 1,
  feedback: { positive: 0, negative: 0 },
  now: NOW,
  ...fields,
});
const quotaLines = (f: Partial<StatusFacts>) =>
  statusReport(facts(f))
    .text.split('\n')
    .filter((l) => l.includes('instructions used'));

describe('statusReport', () => {
  it('counts each project’s instructions of the last hour, those recorded without a project in the default', () => {
    expect(
      quotaLines({
        projects: ['proj_docs', 'proj_handbook'],
        used: [
          { projectId: null, count: 30 },
          { projectId: 'proj_docs', count: 20 },
          { projectId: 'proj_handbook', count: 85 },
        ],
      }),
    ).toEqual([
      ':large_green_circle: `proj_docs`: 50 of 100 instructions used in the last hour (50 left)',
      ':large_orange_circle: `proj_handbook`: 85 of 100 instructions used in the last hour (15 left)',
    ]);
  });

  it('marks the quota green down to 20 left, orange below, red when none is left (never below zero)', () => {
    const mark = (count: number) => quotaLines({ used: [{ projectId: null, count }] })[0]?.split(' ')[0];
    expect(mark(80)).toBe(':large_green_circle:');
    expect(mark(81)).toBe(':large_orange_circle:');
    expect(mark(99)).toBe(':large_orange_circle:');
    expect(mark(100)).toBe(':red_circle:');
    expect(quotaLines({ used: [{ projectId: null, count: 130 }] })[0]).toContain(
      '130 of 100 instructions used in the last hour (0 left)',
    );
  });

  it('lists a served project nobody used, and no project it does not serve', () => {
    const lines = quotaLines({
      projects: ['proj_docs', 'proj_new'],
      used: [{ projectId: 'proj_gone', count: 5 }],
    });
    expect(lines).toEqual([
      ':large_green_circle: `proj_docs`: 0 of 100 instructions used in the last hour (100 left)',
      ':large_green_circle: `proj_new`: 0 of 100 instructions used in the last hour (100 left)',
    ]);
  });

  it('says whether the poller runs and how many jobs it watches', () => {
    expect(statusReport(facts({ activeJobs: 1 })).text).toContain(
      '*Poller:* :large_green_circle: running, watching 1 active job\n',
    );
    expect(statusReport(facts({ activeJobs: 4 })).text).toContain('watching 4 active jobs');
    expect(statusReport(facts({ pollerRunning: false })).text).toContain(
      '*Poller:* :red_circle: stopped (this instance is shutting down)',
    );
  });

  it('says when the agent API last answered, or that it has not since the instance started', () => {
    expect(statusReport(facts()).text).toContain(
      '*Last successful agent API call:* :large_green_circle: 30 seconds ago',
    );
    expect(statusReport(facts({ lastAgentSuccessAt: undefined })).text).toContain(
      ':white_circle: none since this instance started 60 minutes ago',
    );
    expect(statusReport(facts({ lastAgentSuccessAt: NOW + 5_000 })).text).toContain(
      ':large_green_circle: 1 second ago',
    );
  });

  it('shows feedback and the instances in its blocks, which Slack accepts', () => {
    const report = statusReport(facts({ instances: 3, feedback: { positive: 7, negative: 2 } }));
    expect(report.text).toContain('*Feedback on outcomes:* :thumbsup: 7  :thumbsdown: 2');
    expect(report.text.split('\n').slice(0, 2)).toEqual([
      '*docs-agent status*',
      '*Agent quota* (counted from this bot’s own record)',
    ]);
    const fields = (report.blocks[2] as { fields: { text: string }[] }).fields.map((f) => f.text);
    expect(fields).toContain('*Instances*\n3');
    expect(blockProblems(report.blocks, 50)).toEqual([]);
  });

  it('shows a project id inert', () => {
    const [line] = quotaLines({ projects: ['<!channel>'], defaultProject: '<!channel>' });
    expect(line).toContain('`&lt;!channel&gt;`');
  });
});
