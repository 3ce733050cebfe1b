import { describe, expect, it } from 'vitest';
import { type StatusFacts, statusReport } from '../../../src/features/command/status-report.js';
import type { FeedbackReason } from '../../../src/store/feedback.js';
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
  figures: {
    feedback: { positive: 0, negative: 0, reasons: 0 },
    pullRequests: [],
    defaultProject: 'proj_docs',
    following: false,
  },
  reasons: { shown: [], withheld: 0 },
  workspaceUrl: 'https://acme.slack.com/',
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
    const report = statusReport(
      facts({
        instances: 3,
        figures: { ...facts().figures, feedback: { positive: 7, negative: 2, reasons: 1 } },
      }),
    );
    expect(report.text).toContain('Feedback on outcomes: :thumbsup: 7  :thumbsdown: 2 (1 said what to fix)');
    expect(report.text).not.toContain('What to fix');
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

  it('quotes the latest reasons inert, one line each, with who, when and a link to the thread', () => {
    const reason = (fields: Partial<FeedbackReason> = {}): FeedbackReason => ({
      jobId: 7,
      runSeq: 2,
      userId: 'U0REVIEWER',
      reason: 'The <!here> table is *wrong*\nand the link &amp; too',
      at: NOW - 120_000,
      job: { privacy: 'public', channelId: 'C0DOCS', threadTs: '1800000000.000100', requesterId: 'U0ASKER' },
      ...fields,
    });
    const report = statusReport(
      facts({
        reasons: {
          shown: [reason(), reason({ reason: 'x'.repeat(400), job: { ...reason().job, threadTs: null } })],
          withheld: 2,
        },
      }),
    );
    const lines = report.text.split('\n');
    const at = lines.indexOf('*What to fix, latest*');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(
      '• “The &lt;!here&gt; table is *wrong* and the link &amp;amp; too” (<@U0REVIEWER>, 2 minutes ago) · <https://acme.slack.com/archives/C0DOCS/p1800000000000100|thread>',
    );
    // A long reason is cut; a job with no thread has no link.
    expect(lines[at + 2]?.length).toBeLessThan(220);
    expect(lines[at + 2]).not.toContain('|thread>');
    expect(lines[at + 3]).toBe('• _2 more on jobs asked for where you cannot see them: not shown here._');
    expect(blockProblems(report.blocks, 50)).toEqual([]);
  });
});
