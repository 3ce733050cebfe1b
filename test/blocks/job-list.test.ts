import { describe, expect, it } from 'vitest';
import {
  HOME_LIMIT,
  homeRefusedView,
  homeView,
  jobLine,
  jobListMessage,
  LIST_LIMIT,
  type ListContext,
} from '../../src/blocks/job-list.js';
import { triggerKeys } from '../../src/domain/keys.js';
import { md } from '../../src/slack/mrkdwn.js';
import type { JobRecord } from '../../src/store/types.js';
import { blockProblems, viewProblems } from '../helpers/block-kit.js';
import { jobRecord } from '../helpers/job-record.js';

const NOW = 1_700_000_000_000 + 3 * 3_600_000;
const WORKSPACE = 'https://acme.slack.com/';
const THREAD = 'https://acme.slack.com/archives/C0DOCS/p1700000000000100';
const PR = 'https://github.com/acme/docs/pull/7';

const ctx = (viewer: ListContext['viewer'] = { userId: 'U0ALICE' }): ListContext => ({
  workspaceUrl: WORKSPACE,
  now: NOW,
  prLinkHosts: ['github.com'],
  viewer,
});
const jobs = (n: number) =>
  Array.from({ length: n }, (_, i) => jobRecord({ id: i + 1, instruction: `Instruction number ${i + 1}` }));
type Rendered = { type: string; text?: { text: string }; elements?: { text: string }[] };

describe('jobLine', () => {
  it('links the instruction to its thread, then status, channel, age and pull request', () => {
    const job = jobRecord({ phase: 'idle', lastOutcome: 'completed_pr', prLink: PR });
    expect(jobLine(job, ctx())).toBe(
      `*<${THREAD}|Add a quickstart>*\n:white_check_mark: Done: <${PR}|pull request> · <#C0DOCS> · 3 hours ago · <${PR}|pull request>`,
    );
  });

  it('leaves out the pull request of a job that has none', () => {
    expect(jobLine(jobRecord(), ctx())).toBe(
      `*<${THREAD}|Add a quickstart>*\n:hourglass_flowing_sand: Working… · <#C0DOCS> · 3 hours ago`,
    );
    expect(jobLine(jobRecord({ privacy: 'private' }), ctx({ userId: 'U0BOB' }))).toBe(
      '*:lock: A job asked for in private*\n:hourglass_flowing_sand: Working… · 3 hours ago',
    );
  });

  it('says a workflow started a step’s job, and for whom; not for "Try again" on one', () => {
    const step = jobRecord({
      origin: 'workflow',
      triggerKey: triggerKeys.step('Fx0STEP'),
      requesterId: 'U0SERVICE',
    });
    expect(jobLine(step, ctx({ userId: 'U0SERVICE' }))).toBe(
      `*<${THREAD}|Add a quickstart>*\n:hourglass_flowing_sand: Working… · <#C0DOCS> · 3 hours ago · started by a workflow for <@U0SERVICE>`,
    );
    // "Try again" keeps the origin, but the job is the person's who pressed it.
    const retried = jobRecord({ origin: 'workflow', triggerKey: triggerKeys.retry(7) });
    expect(jobLine(retried, ctx())).not.toContain('workflow');
    // A private job says nothing of who it was for.
    const hidden = jobRecord({ ...step, privacy: 'private' });
    expect(jobLine(hidden, ctx({ userId: 'U0BOB' }))).not.toContain('U0SERVICE');
  });

  it('links no thread for a job whose card or thread is not known', () => {
    expect(jobLine(jobRecord({ origin: 'mention', cardTs: null }), ctx())).toMatch(/^\*Add a quickstart\*\n/);
    expect(jobLine(jobRecord({ threadTs: null }), ctx())).toMatch(/^\*Add a quickstart\*\n/);
  });

  it('shows the instruction as plain bold text while the workspace address is unknown', () => {
    const unknownWorkspace = { ...ctx(), workspaceUrl: undefined };
    expect(jobLine(jobRecord(), unknownWorkspace)).toMatch(/^\*Add a quickstart\*\n/);
  });

  it('makes a hostile instruction a readable one-line label that cannot break the link', () => {
    const line = jobLine(
      jobRecord({ instruction: 'Ask <!channel>\n<https://phish.example|here> | now' }),
      ctx(),
    );
    expect(line.split('\n')[0]).toBe(`*<${THREAD}|Ask @channel here (https://phish.example) / now>*`);
    expect(jobLine(jobRecord({ instruction: '  \n ' }), ctx())).toContain('|(no instruction)>*');
    expect(jobLine(jobRecord({ instruction: 'Fix  the\n\n  page' }), ctx())).toContain('|Fix the page>*');
    const long = jobLine(jobRecord({ instruction: 'w'.repeat(300) }), ctx());
    expect(/\|(w+…)>/.exec(long)?.[1]).toHaveLength(80);
  });

  it('names a direct message in words: Slack would show its id as an unknown channel', () => {
    const line = jobLine(jobRecord({ channelId: 'D0DM', privacy: 'direct' }), ctx());
    expect(line).toContain(' · direct message · ');
    expect(line).not.toContain('<#D0DM>');
  });

  it("shows someone else's private job without its words or its place", () => {
    const job = jobRecord({
      privacy: 'private',
      channelId: 'G0SECRET',
      instruction: 'Falcon launch',
      prLink: PR,
    });
    const line = jobLine({ ...job, phase: 'idle', lastOutcome: 'completed_pr' }, ctx({ userId: 'U0BOB' }));
    expect(line).toBe(
      `*:lock: A job asked for in private*\n:white_check_mark: Done: <${PR}|pull request> · 3 hours ago · <${PR}|pull request>`,
    );
    // The requester, and the members of its own conversation, see it whole.
    expect(jobLine(job, ctx({ userId: 'U0ALICE' }))).toContain('Falcon launch');
    expect(jobLine(job, ctx({ userId: 'U0BOB', channelId: 'G0SECRET' }))).toContain('Falcon launch');
  });

  it('treats a job of unknown privacy as private', () => {
    expect(jobLine(jobRecord({ privacy: 'unknown' }), ctx({ userId: 'U0BOB' }))).toContain(
      'asked for in private',
    );
  });
});

describe('jobListMessage', () => {
  it('says there are none yet, for the person and for the channel', () => {
    const mine = jobListMessage([], { kind: 'mine' }, ctx());
    expect(mine.text).toContain('You have not started any docs agent jobs yet.');
    expect(mine.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: mine.text } }]);
    expect(jobListMessage([], { kind: 'channel', channelId: 'C0DOCS' }, ctx()).text).toContain(
      'No docs agent jobs have been started in this channel yet.',
    );
  });

  it(`lists at most ${LIST_LIMIT} jobs, titled for its scope, with how to see the other list`, () => {
    const list = jobListMessage(jobs(14), { kind: 'channel', channelId: 'C0DOCS' }, ctx());
    const blocks = list.blocks as Rendered[];
    expect(blocks[0]?.text?.text).toBe('*Recent docs agent jobs in <#C0DOCS>*');
    expect(blocks.filter((b) => b.text?.text.includes('Instruction number'))).toHaveLength(LIST_LIMIT);
    expect(list.text).toContain('Instruction number 10');
    expect(list.text).not.toContain('Instruction number 11');
    expect(blocks.at(-1)?.elements?.[0]?.text).toContain('`/docs-agent list` shows your own jobs');
    const mine = jobListMessage(jobs(1), { kind: 'mine' }, ctx()).blocks as Rendered[];
    expect(mine[0]?.text?.text).toBe('*Your recent docs agent jobs*');
    expect(mine.at(-1)?.elements?.[0]?.text).toContain('`/docs-agent list channel`');
  });

  it('keeps the text within 4,000 characters and the blocks within Slack’s limits', () => {
    const long = jobs(10).map((j) => ({ ...j, prLink: `https://x.example/${'p'.repeat(900)}` }));
    const list = jobListMessage(long, { kind: 'mine' }, ctx());
    expect(list.text.length).toBeLessThanOrEqual(4_000);
    expect(blockProblems(list.blocks, 50)).toEqual([]);
  });
});

describe('homeView', () => {
  const guide = md`How to use it`;
  const blocksOf = (view: Record<string, unknown>) => view.blocks as Rendered[];

  it(`shows at most ${HOME_LIMIT} jobs, when it was updated, then the guide`, () => {
    const view = homeView(jobs(20), guide, ctx());
    expect(viewProblems(view)).toEqual([]);
    expect(view).toMatchObject({ type: 'home', callback_id: 'docs_agent_home' });
    const blocks = blocksOf(view);
    expect(blocks.filter((b) => b.text?.text.includes('Instruction number'))).toHaveLength(HOME_LIMIT);
    expect(blocks.map((b) => b.type).slice(-4)).toEqual(['context', 'divider', 'header', 'section']);
    expect(blocks.at(-4)?.elements?.[0]?.text).toMatch(
      /^Updated <!date\^\d+\^\{date_short_pretty\} at \{time\}\|/,
    );
    expect(blocks.at(-1)?.text?.text).toBe('How to use it');
  });

  it('invites a newcomer to start, above the guide', () => {
    const blocks = blocksOf(homeView([], guide, ctx()));
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'divider', 'header', 'section']);
    expect(blocks[1]?.text?.text).toBe('You have not started any jobs yet. Here is how:');
  });

  it('shows someone who may not use the bot why, and nothing else', () => {
    const view = homeRefusedView(md`You may not use it.`);
    expect(viewProblems(view)).toEqual([]);
    expect(view).toMatchObject({ type: 'home', callback_id: 'docs_agent_home' });
    expect(blocksOf(view).map((b) => b.text?.text)).toEqual(['docs-agent', 'You may not use it.']);
  });
});

describe('lists of jobs of every kind', () => {
  it('render valid blocks for each phase and privacy', () => {
    const all: JobRecord[] = (
      ['accepted', 'active', 'idle', 'not_started', 'gone', 'retried'] as const
    ).flatMap((phase, i) =>
      (['public', 'private', 'direct', 'pane', 'unknown'] as const).map((privacy, k) =>
        jobRecord({
          id: i * 10 + k + 1,
          phase,
          privacy,
          channelId: privacy === 'direct' ? 'D0DM' : 'C0DOCS',
        }),
      ),
    );
    expect(viewProblems(homeView(all, md`guide`, ctx({ userId: 'U0BOB' })))).toEqual([]);
  });
});
