import { describe, expect, it } from 'vitest';
import {
  cardTsOf,
  outcomePost,
  RETRY_ACTION_ID,
  STATUS_REACTIONS,
  statusCard,
  statusReaction,
} from '../../src/blocks/status-card.js';
import { triggerKeys } from '../../src/domain/keys.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import type { JobRecord } from '../../src/store/types.js';
import { blockProblems } from '../helpers/block-kit.js';
import { jobRecord, MENTION_THREAD } from '../helpers/job-record.js';
import { HINTS, RUN_OUTCOMES } from '../helpers/rendering.js';

const PR = 'https://github.com/acme/docs/pull/7';

type Element = { type: string; action_id?: string; value?: string; url?: string; text?: { text: string } };
type Rendered = { type: string; text?: { text: string }; fields?: { text: string }[]; elements?: Element[] };

const card = (fields: Partial<JobRecord>, now = 1_700_000_000_000 + 5 * 60_000) => {
  const job = jobRecord(fields);
  const rendered = statusCard(job, now, HINTS);
  return { ...rendered, blocks: rendered.blocks as Rendered[] };
};
const buttons = (blocks: Rendered[]) =>
  blocks.flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : []));

describe('statusCard', () => {
  it('shows who asked, the instruction, and the facts known of the job as fields', () => {
    const { blocks } = card({ repository: 'acme/docs', ref: 'main', model: 'sonnet', runCount: 2 });
    expect(blocks[0]?.text?.text).toBe(':memo: <@U0ALICE> asked the docs agent:\n>Add a quickstart');
    expect(blocks[1]?.fields?.map((f) => f.text)).toEqual([
      '*Status*\n:hourglass_flowing_sand: Working (run 2)…',
      '*Runs*\n2',
      '*Repository*\n`acme/docs` on `main`',
      '*Model*\n`sonnet`',
      '*Elapsed*\n5 minutes as of <!date^1700000300^{time}|22:18 UTC>',
      '*Job*\n`job_1`',
    ]);
    expect(blockProblems(blocks, 50)).toEqual([]);
  });

  it('says a workflow started a step’s job, for whom; not for "Try again" on one', () => {
    const step = card({
      origin: 'workflow',
      triggerKey: triggerKeys.step('Fx0STEP'),
      requesterId: 'U0SERVICE',
    });
    expect(step.blocks[0]?.text?.text).toBe(
      ':memo: Started by a workflow for <@U0SERVICE>:\n>Add a quickstart',
    );
    expect(step.text.startsWith(':memo: Started by a workflow for <@U0SERVICE>:\n')).toBe(true);
    const retried = card({ origin: 'workflow', triggerKey: triggerKeys.retry(7) });
    expect(retried.blocks[0]?.text?.text).toBe(':memo: <@U0ALICE> asked the docs agent:\n>Add a quickstart');
  });

  it('leaves out what is not known yet, and never shows a negative elapsed time', () => {
    const { blocks } = card({ phase: 'accepted', runCount: 0, agentJobId: null }, 1_600_000_000_000);
    expect(blocks[1]?.fields?.map((f) => f.text.split('\n')[0])).toEqual(['*Status*', '*Elapsed*']);
    expect(blocks[1]?.fields?.[1]?.text).toMatch(/^\*Elapsed\*\n1 second as of/);
  });

  it('shows repository, ref and model from the agent API inert', () => {
    const { blocks } = card({ repository: '<!channel>', ref: 'a`b', model: '<@U0EVE>' });
    const fields = blocks[1]?.fields?.map((f) => f.text).join('\n') ?? '';
    expect(fields).toContain("`&lt;!channel&gt;` on `a'b`");
    expect(fields).toContain('`&lt;@U0EVE&gt;`');
    expect(fields).not.toMatch(/<(?!!date\^)[!@]/);
  });

  it('offers the pull request as a button only for a trusted address', () => {
    const trusted = card({ phase: 'idle', lastOutcome: 'completed_pr', prLink: PR });
    expect(buttons(trusted.blocks)).toEqual([
      expect.objectContaining({ type: 'button', url: PR, action_id: 'view_pull_request', style: 'primary' }),
    ]);
    const untrusted = card({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      prLink: 'https://github.com/login',
    });
    expect(buttons(untrusted.blocks)).toEqual([]);
  });

  it('offers Try again, carrying the job id, exactly when the job may be tried again', () => {
    const failed = card({ id: 42, phase: 'idle', lastOutcome: 'failed' });
    expect(buttons(failed.blocks)).toEqual([
      expect.objectContaining({
        type: 'button',
        action_id: RETRY_ACTION_ID,
        value: '42',
        text: expect.objectContaining({ text: 'Try again' }),
      }),
    ]);
    expect(buttons(card({ phase: 'not_started' }).blocks).map((b) => b.action_id)).toEqual([RETRY_ACTION_ID]);
    expect(buttons(card({ phase: 'start_unknown' }).blocks).map((b) => b.action_id)).toEqual([
      RETRY_ACTION_ID,
    ]);
    expect(buttons(card({ phase: 'idle', lastOutcome: 'completed_no_changes' }).blocks)).toEqual([]);
    expect(buttons(card({ phase: 'not_started', erasedAt: 1 }).blocks)).toEqual([]);
    expect(buttons(card({ phase: 'active' }).blocks)).toEqual([]);
  });

  it('ends with the follow-up hint only while the job takes follow-ups', () => {
    const last = (phase: JobRecord['phase']) => card({ phase }).blocks.at(-1);
    expect(last('active')?.type).toBe('context');
    expect(last('idle')?.type).toBe('context');
    for (const phase of ['accepted', 'not_started', 'gone', 'retried'] as const) {
      expect(last(phase)?.type, phase).not.toBe('context');
    }
  });

  it('keeps every block and the text within Slack’s limits for a huge instruction', () => {
    const { text, blocks } = card({ instruction: '<!here> '.repeat(2_000), repository: 'r'.repeat(5_000) });
    expect(text.length).toBeLessThanOrEqual(4_000);
    expect(blockProblems(blocks, 50)).toEqual([]);
    expect(JSON.stringify(blocks)).not.toContain('<!here>');
  });
});

describe('statusReaction', () => {
  /** The emoji on the root of a mention's thread, the card a reply there. */
  const reaction = (fields: Partial<JobRecord>) =>
    statusReaction(jobRecord({ ...MENTION_THREAD, ...fields }));
  const everyState = JOB_PHASES.flatMap((phase) =>
    [null, ...RUN_OUTCOMES].map((lastOutcome) => ({ phase, lastOutcome })),
  );

  it('mirrors the card: working, done, failed, unknown', () => {
    for (const phase of ['accepted', 'posting', 'creating', 'active'] as const) {
      expect(reaction({ phase })).toBe('hourglass_flowing_sand');
    }
    expect(reaction({ phase: 'not_started' })).toBe('x');
    expect(reaction({ phase: 'gone' })).toBe('x');
    expect(reaction({ phase: 'start_unknown' })).toBe('grey_question');
    expect(reaction({ phase: 'idle', lastOutcome: 'completed_pr' })).toBe('white_check_mark');
    expect(reaction({ phase: 'idle', lastOutcome: 'completed_no_changes' })).toBe('white_check_mark');
    expect(reaction({ phase: 'idle', lastOutcome: null })).toBe('white_check_mark');
    expect(reaction({ phase: 'idle', lastOutcome: 'failed' })).toBe('x');
    expect(reaction({ phase: 'idle', lastOutcome: 'gone' })).toBe('x');
    expect(reaction({ phase: 'idle', lastOutcome: 'archived' })).toBe('file_cabinet');
    expect(reaction({ phase: 'idle', lastOutcome: 'stopped_watching' })).toBe('zzz');
  });

  it('leaves the root to the job that replaced a retried one', () => {
    expect(reaction({ phase: 'retried' })).toBeNull();
  });

  it('only ever puts an emoji of STATUS_REACTIONS on a root, so each can be taken off again', () => {
    const emoji = everyState.map(reaction).filter((e) => e !== null);
    expect(new Set(emoji).size).toBeGreaterThan(1);
    for (const e of emoji) expect(STATUS_REACTIONS).toContain(e);
  });

  it('puts none on a root that is the card itself (a command’s), whatever the job’s state', () => {
    const onCard = (fields: Partial<JobRecord>) => statusReaction(jobRecord(fields), undefined, false);
    const root = '1700000000.000300';
    for (const state of everyState) {
      expect(onCard({ ...state, origin: 'command', threadTs: root, cardTs: root })).toBeNull();
      // Recorded by a version that did not record the card: a command's card is still its root.
      expect(onCard({ ...state, origin: 'command', threadTs: root, cardTs: null })).toBeNull();
    }
    // A mention's root does carry one, and so does the first card of a command tried again, its
    // new card a reply under it.
    expect(reaction({ phase: 'active' })).toBe('hourglass_flowing_sand');
    expect(reaction({ phase: 'active', origin: 'command', cardTs: '1700000000.000400' })).toBe(
      'hourglass_flowing_sand',
    );
  });
});

describe('outcomePost', () => {
  it('is the outcome text in one section, with the pull request button for a trusted address', () => {
    const job = jobRecord({ phase: 'idle', lastOutcome: 'completed_pr', prLink: PR });
    const post = outcomePost('completed_pr', job, ['U0ALICE'], 86_400_000, HINTS);
    const blocks = post.blocks as Rendered[];
    expect(blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: post.text } });
    expect(post.text.startsWith('<@U0ALICE> :white_check_mark:')).toBe(true);
    expect(buttons(blocks).map((b) => b.url)).toEqual([PR]);
  });

  it('has no button for any other outcome, even with an address', () => {
    for (const outcome of RUN_OUTCOMES.filter((o) => o !== 'completed_pr')) {
      const job = jobRecord({ phase: 'idle', lastOutcome: outcome, prLink: PR });
      const post = outcomePost(outcome, job, [], 86_400_000, HINTS);
      expect(post.blocks, outcome).toHaveLength(1);
      expect(blockProblems(post.blocks, 50)).toEqual([]);
    }
  });
});

describe('cardTsOf', () => {
  it('is the recorded card, else the root of a command job, else unknown', () => {
    expect(cardTsOf(jobRecord({ cardTs: '2.0', threadTs: '1.0' }))).toBe('2.0');
    expect(cardTsOf(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'command' }))).toBe('1.0');
    expect(cardTsOf(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'mention' }))).toBeNull();
  });
});
