import { describe, expect, it } from 'vitest';
import {
  pullRequestEnded,
  pullRequestEndedText,
  pullRequestReaction,
  pullRequestStatus,
} from '../../src/blocks/pull-requests.js';
import { STATUS_REACTIONS, statusCard, statusReaction } from '../../src/blocks/status-card.js';
import { sessionStatusOf } from '../../src/delivery/sessions.js';
import type { PullRequestRecord } from '../../src/store/types.js';
import { blockProblems } from '../helpers/block-kit.js';
import { jobRecord, MENTION_THREAD } from '../helpers/job-record.js';
import { HINTS } from '../helpers/rendering.js';

const AT = Date.parse('2026-11-30T12:00:00Z');

const pr = (fields: Partial<PullRequestRecord> = {}): PullRequestRecord => ({
  id: 3,
  jobId: 1,
  projectId: null,
  url: 'https://github.com/acme/docs/pull/7',
  owner: 'acme',
  repo: 'docs',
  number: 7,
  state: 'open',
  following: 'following',
  title: 'Document the quickstart',
  mergedBy: null,
  endedAt: null,
  etag: '"e"',
  openedAt: AT - 3_600_000,
  nextCheckAt: AT + 60_000,
  checkFailures: 0,
  claimedBy: null,
  claimedUntil: null,
  updatedAt: AT,
  ...fields,
});
const merged = pr({
  state: 'merged',
  following: 'ended',
  mergedBy: 'octocat',
  endedAt: AT,
  nextCheckAt: null,
});
const closed = pr({ state: 'closed', following: 'ended', endedAt: AT, nextCheckAt: null });
/** A mention's job done: the root, the mention, carries the emoji. */
const done = jobRecord({
  ...MENTION_THREAD,
  phase: 'idle',
  lastOutcome: 'completed_pr',
  prLink: 'https://github.com/acme/docs/pull/7',
});

describe('what the card says of a followed pull request', () => {
  it('says nothing until the host answered, nor of one replaced by a newer one', () => {
    expect(pullRequestStatus(undefined)).toBeUndefined();
    expect(pullRequestStatus(pr({ state: null }))).toBeUndefined();
    expect(pullRequestStatus(pr({ following: 'replaced' }))).toBeUndefined();
  });

  it('shows it open, merged by whom and when, closed without merging, or why it is not followed', () => {
    expect(pullRequestStatus(pr())).toBe(':large_green_circle: Open: Document the quickstart');
    expect(pullRequestStatus(merged)).toBe(
      ':large_purple_circle: Merged by `octocat` <!date^1796040000^{date_short_pretty} at {time}|12:00 UTC>',
    );
    expect(pullRequestStatus(closed)).toMatch(/^:no_entry_sign: Closed without merging <!date\^/);
    expect(pullRequestStatus(pr({ following: 'expired' }))).toMatch(/no longer followed/);
    expect(pullRequestStatus(pr({ following: 'missing', state: null }))).toMatch(
      /^:warning: Could not follow/,
    );
    expect(pullRequestStatus(pr({ following: 'refused', state: null }))).toMatch(
      /^:warning: Could not follow/,
    );
    expect(pullRequestStatus(pr({ following: 'other_host', state: null }))).toMatch(/Not followed/);
  });

  it('escapes a hostile title and shows a login as text: no mention, no link, no broadcast', () => {
    const hostile = pr({ title: '<!here> <@U0ADMIN> <https://evil.example|click> & *bold*' });
    expect(pullRequestStatus(hostile)).toBe(
      ':large_green_circle: Open: &lt;!here&gt; &lt;@U0ADMIN&gt; &lt;https://evil.example|click&gt; &amp; *bold*',
    );
    const login = pr({ ...merged, mergedBy: 'evil`<@U0ADMIN>' });
    expect(pullRequestStatus(login)).not.toContain('<@');
  });

  it('puts a line on the card, within Slack’s limits, only when there is something to say', () => {
    const fields = (p?: PullRequestRecord) =>
      (statusCard(done, AT, HINTS, p).blocks[1] as { fields: { text: string }[] }).fields.map((f) => f.text);
    expect(fields(undefined).some((f) => f.startsWith('*Pull request*'))).toBe(false);
    expect(fields(merged)).toContain(`*Pull request*\n${pullRequestStatus(merged)}`);
    expect(blockProblems(statusCard(done, AT, HINTS, pr({ title: 'x'.repeat(300) })).blocks, 50)).toEqual([]);
  });
});

describe('the emoji and the session once a pull request ended', () => {
  it('swap the root’s emoji for merged or closed, and close the session', () => {
    expect(statusReaction(done, merged)).toBe('large_purple_circle');
    expect(statusReaction(done, closed)).toBe('no_entry_sign');
    expect(statusReaction(done, pr())).toBe('white_check_mark');
    for (const emoji of [pullRequestReaction(merged), pullRequestReaction(closed)])
      expect(STATUS_REACTIONS).toContain(emoji);
    expect(sessionStatusOf(done, merged)).toBe('closed');
    expect(sessionStatusOf(done, pr())).toBe('active');
    expect(pullRequestEnded(pr({ following: 'expired' }))).toBe(false);
  });

  it('leave a command’s card, its thread’s root, without an emoji: the card says it', () => {
    const command = jobRecord({ ...done, cardTs: done.threadTs });
    for (const ended of [merged, closed, pr()]) expect(statusReaction(command, ended)).toBeNull();
    const shown = JSON.stringify(statusCard(command, AT, HINTS, merged).blocks);
    expect(shown).toContain(JSON.stringify(`*Pull request*\n${pullRequestStatus(merged)}`).slice(1, -1));
  });

  it('leave a job working on a follow-up as working', () => {
    const working = { ...done, phase: 'active' as const, runCount: 2 };
    expect(statusReaction(working, merged)).toBe('hourglass_flowing_sand');
    expect(sessionStatusOf(working, merged)).toBe('processing');
  });
});

describe('what the requester is told once', () => {
  it('mentions them, links a trusted pull request, and names who merged it as text', () => {
    expect(pullRequestEndedText(merged, done, HINTS)).toBe(
      '<@U0ALICE> :large_purple_circle: <https://github.com/acme/docs/pull/7|The pull request> was merged by `octocat`.',
    );
    expect(pullRequestEndedText(closed, done, HINTS)).toMatch(/was closed without being merged/);
  });

  it('shows an untrusted address as inert text', () => {
    const elsewhere = { ...merged, url: 'https://evil.example/acme/docs/pull/7' };
    expect(pullRequestEndedText(elsewhere, done, HINTS)).toContain('`https://evil.example/acme/docs/pull/7`');
  });
});
