import { describe, expect, it } from 'vitest';
import {
  channelNotification,
  type NotificationPlace,
  requesterMessage,
} from '../../src/blocks/notifications.js';
import type { JobRecord } from '../../src/store/types.js';
import { blockProblems } from '../helpers/block-kit.js';
import { jobRecord } from '../helpers/job-record.js';
import { HINTS } from '../helpers/rendering.js';

const WORKSPACE = 'https://acme.slack.com';
const PR = 'https://github.com/acme/docs/pull/7';
const THREAD =
  'https://acme.slack.com/archives/C0DOCS/p1700000000000200?thread_ts=1700000000.000100&cid=C0DOCS';
const NEWS: NotificationPlace = { channel: 'C0NEWS', privateJobs: 'outcome-only' };

const finished = (fields: Partial<JobRecord> = {}) =>
  jobRecord({
    phase: 'idle',
    lastOutcome: 'completed_pr',
    prLink: PR,
    cardTs: '1700000000.000200',
    instruction: 'Document the <!channel> rate limits',
    ...fields,
  });

describe('channelNotification', () => {
  it('announces a public job: the pull request, its thread, and its words quoted inert', () => {
    expect(channelNotification('completed_pr', finished(), HINTS, WORKSPACE, NEWS).text).toBe(
      [
        `:white_check_mark: The docs agent opened a pull request: *<${PR}|Review the pull request>* · see <${THREAD.replace(/&/g, '&amp;')}|the job’s thread> in <#C0DOCS>`,
        '>Document the @channel rate limits',
      ].join('\n'),
    );
  });

  it('mentions nobody, not even the requester', () => {
    const { text } = channelNotification(
      'failed',
      finished({ lastOutcome: 'failed' }),
      HINTS,
      WORKSPACE,
      NEWS,
    );
    expect(text).toMatch(/^\*Docs agent:\* :x: Failed · see /);
    expect(text).not.toMatch(/<[@!]/);
  });

  it('names the channel alone while the workspace address is unknown', () => {
    const { text } = channelNotification('completed_pr', finished(), HINTS, undefined, NEWS);
    expect(text).toContain('· see its thread in <#C0DOCS>');
    const unthreaded = channelNotification(
      'completed_pr',
      finished({ threadTs: null }),
      HINTS,
      WORKSPACE,
      NEWS,
    );
    expect(unthreaded.text).toContain('· see its thread in <#C0DOCS>');
  });

  it('tells a private job by its outcome only: no words, no link or mention of its place', () => {
    for (const privacy of ['private', 'direct', 'pane', 'unknown'] as const) {
      const job = finished({ privacy, channelId: 'G0SECRET' });
      const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, NEWS);
      expect(text, privacy).toBe(
        `:white_check_mark: The docs agent opened a pull request: *<${PR}|Review the pull request>*\n:lock: Asked for in private, so its words and its thread stay there.`,
      );
    }
  });

  it('quotes a private job’s words when the team chose to, still without its place', () => {
    const job = finished({ privacy: 'private', channelId: 'G0SECRET' });
    const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, {
      ...NEWS,
      privateJobs: 'quote',
    });
    expect(text).toContain(
      ':lock: Asked for in private, so its thread is not linked here:\n>Document the @channel',
    );
    expect(text).not.toContain('G0SECRET');
  });

  it('announces a private job whole in its own conversation', () => {
    const job = finished({ privacy: 'private', channelId: 'G0SECRET' });
    const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, {
      ...NEWS,
      channel: 'G0SECRET',
    });
    expect(text).toContain('in <#G0SECRET>');
    expect(text).toContain('>Document the @channel rate limits');
  });

  it('quotes at most 200 characters of the instruction, and shows an untrusted address inert', () => {
    const job = finished({ instruction: 'i'.repeat(1_000), prLink: 'https://phish.example/pull/1' });
    const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, NEWS);
    const quote = text.split('\n').find((l) => l.startsWith('>')) ?? '';
    expect(quote.length).toBeLessThanOrEqual(201);
    expect(text).toContain('*Review the pull request at `https://phish.example/pull/1`*');
  });
});

describe('requesterMessage', () => {
  it('introduces the outcome post with a link to its thread, mentioning nobody', () => {
    const dm = requesterMessage('completed_pr', finished(), HINTS, 86_400_000, WORKSPACE);
    const intro = `:bell: News of your docs agent job, also posted in <${THREAD.replace(/&/g, '&amp;')}|the job’s thread> in <#C0DOCS>:`;
    // The outcome follows on its own line, starting with its emoji: the DM mentions nobody.
    const opening = `${intro}\n:white_check_mark: The docs agent finished and opened a pull request:`;
    expect(dm.text.slice(0, opening.length)).toBe(opening);
    expect(dm.text).not.toMatch(/<[@!]/);
    expect(dm.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: intro } });
    expect(blockProblems(dm.blocks, 50)).toEqual([]);
  });

  it('keeps the text within 4,000 characters', () => {
    const job = finished({ prLink: `https://github.com/acme/docs/pull/7?${'q'.repeat(2_900)}` });
    const dm = requesterMessage('completed_pr', job, HINTS, 86_400_000, WORKSPACE);
    expect(dm.text.length).toBeLessThanOrEqual(4_000);
    expect(blockProblems(dm.blocks, 50)).toEqual([]);
  });
});
