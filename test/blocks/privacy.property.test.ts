import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { homeView, jobListMessage } from '../../src/blocks/job-list.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import { JOB_PRIVACIES, type JobPrivacy } from '../../src/domain/privacy.js';
import { usage } from '../../src/features/command/wording.js';
import { channelNotification, requesterMessage } from '../../src/jobs/notifications.js';
import type { JobRecord } from '../../src/store/types.js';
import { jobRecord as recordOf } from '../helpers/job-record.js';
import { HINTS, RUN_OUTCOMES } from '../helpers/rendering.js';

/**
 * The privacy rule, held over every renderer that shows a job somewhere else than its own thread:
 * for any job not asked for in a public channel, nothing rendered for another audience (a
 * notification channel, another person's list or App Home) carries its words, or names or links
 * the conversation it was asked in.
 */

const WORKSPACE = 'https://acme.slack.com/';
const NEWS = 'C0NEWS';
const REQUESTER = 'U0ALICE';
/** Survives escaping, inert quoting and plain-text labels unchanged: found wherever the words are. */
const MARKER = 'Qx7FalconTier';

const PRIVATE: JobPrivacy[] = JOB_PRIVACIES.filter((p) => p !== 'public');

const words = fc
  .tuple(fc.string({ maxLength: 40 }), fc.string({ maxLength: 3_000 }))
  .map(([before, after]) => `${MARKER} ${before} ${after}`);
/** A conversation's id: a channel, a private group or group DM, or a direct message. */
const channelId = fc.stringMatching(/^[CGD][A-Z0-9]{8,10}$/);

const job = (privacy: fc.Arbitrary<JobPrivacy>) =>
  fc
    .record({
      id: fc.integer({ min: 1, max: 10_000 }),
      channelId,
      instruction: words,
      privacy,
      phase: fc.constantFrom(...JOB_PHASES),
      lastOutcome: fc.constantFrom(null, ...RUN_OUTCOMES),
      prLink: fc.constantFrom(null, 'https://github.com/acme/docs/pull/7'),
      threadTs: fc.constantFrom(null, '1700000000.000100'),
      origin: fc.constantFrom('command', 'mention', 'shortcut', 'direct' as const),
      contextChannelId: fc.constantFrom(null, 'C0APIDOCS1'),
    })
    .map((fields) => jobRecord(fields));

/** A finished job's record, its card a reply in its thread. */
const jobRecord = (fields: Partial<JobRecord>): JobRecord =>
  recordOf({ cardTs: '1700000000.000200', phase: 'idle', lastOutcome: 'completed_pr', ...fields });

/** Neither the words nor the place of `j` anywhere in `rendered`. */
function expectNothingOf(j: JobRecord, rendered: unknown) {
  const all = JSON.stringify(rendered);
  expect(all).not.toContain(MARKER);
  expect(all).not.toContain(j.channelId);
}

const listContext = (viewer: { userId?: string; channelId?: string }) => ({
  workspaceUrl: WORKSPACE,
  now: 1_800_000_000_000,
  prLinkHosts: HINTS.prLinkHosts,
  viewer,
});

describe('a job asked for in private, rendered for another audience', () => {
  it('the notification channel gets its outcome, never its words or its place', () => {
    fc.assert(
      fc.property(job(fc.constantFrom(...PRIVATE)), fc.constantFrom(...RUN_OUTCOMES), (j, outcome) => {
        fc.pre(j.channelId !== NEWS);
        const place = { channel: NEWS, privateJobs: 'outcome-only' as const };
        expectNothingOf(j, channelNotification(outcome, j, HINTS, WORKSPACE, place));
        // Quoting its words, when a team asks for it, still names no place the channel cannot open.
        const quoted = channelNotification(outcome, j, HINTS, WORKSPACE, { ...place, privateJobs: 'quote' });
        expect(JSON.stringify(quoted)).not.toContain(j.channelId);
      }),
      { numRuns: 300 },
    );
  });

  it('someone else’s job list and App Home show neither its words nor its place', () => {
    fc.assert(
      fc.property(fc.array(job(fc.constantFrom(...PRIVATE)), { minLength: 1, maxLength: 12 }), (js) => {
        const other = { userId: 'U0MALLORY', channelId: 'C0ELSEWHERE' };
        fc.pre(js.every((j) => j.channelId !== other.channelId));
        for (const rendered of [
          jobListMessage(js, { kind: 'mine' }, listContext(other)),
          jobListMessage(js, { kind: 'channel', channelId: other.channelId }, listContext(other)),
          homeView(js, usage(HINTS), listContext({ userId: other.userId })),
        ])
          for (const j of js) expectNothingOf(j, rendered);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the same renderers, for an audience that may see the job (so the rule above is not vacuous)', () => {
  it('a public job is announced with its words and its thread', () => {
    fc.assert(
      fc.property(job(fc.constant('public')), (j) => {
        const post = channelNotification('completed_pr', j, HINTS, WORKSPACE, {
          channel: NEWS,
          privateJobs: 'outcome-only',
        });
        expect(post.text).toContain(MARKER);
        expect(post.text).toContain(j.channelId);
      }),
      { numRuns: 100 },
    );
  });

  it('the requester sees their own private jobs in their list and App Home, and their DM names only the job’s own place', () => {
    fc.assert(
      fc.property(job(fc.constantFrom(...PRIVATE)), fc.constantFrom(...RUN_OUTCOMES), (j, outcome) => {
        const mine = listContext({ userId: REQUESTER });
        expect(JSON.stringify(jobListMessage([j], { kind: 'mine' }, mine))).toContain(MARKER);
        expect(JSON.stringify(homeView([j], usage(HINTS), mine))).toContain(MARKER);
        // The members of the job's own conversation see it in that conversation's list.
        const there = listContext({ userId: 'U0BOB', channelId: j.channelId });
        expect(
          JSON.stringify(jobListMessage([j], { kind: 'channel', channelId: j.channelId }, there)),
        ).toContain(MARKER);
        const dm = requesterMessage(outcome, j, HINTS, 86_400_000, WORKSPACE);
        const all = JSON.stringify(dm);
        for (const [, id] of all.matchAll(/<#([A-Z0-9]+)/g)) expect(id).toBe(j.channelId);
        for (const [, id] of all.matchAll(/\/archives\/([A-Z0-9]+)\//g)) expect(id).toBe(j.channelId);
      }),
      { numRuns: 150 },
    );
  });
});
