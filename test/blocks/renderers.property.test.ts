import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentBadRequestError, AgentRateLimitedError } from '../../src/agent/errors.js';
import { homeView, jobListMessage } from '../../src/blocks/job-list.js';
import { cardText, outcomeText, text } from '../../src/blocks/messages.js';
import { agentErrorText, refusalText } from '../../src/blocks/refusal-texts.js';
import { outcomePost, statusCard } from '../../src/blocks/status-card.js';
import { rescueIntro } from '../../src/delivery/rescue.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import { JOB_PRIVACIES } from '../../src/domain/privacy.js';
import { commandText, usage } from '../../src/features/command/wording.js';
import { sendModal } from '../../src/features/shortcut/modal.js';
import { permalink } from '../../src/slack/links.js';
import { md, recordedMrkdwn } from '../../src/slack/mrkdwn.js';
import { blockProblems, viewProblems } from '../helpers/block-kit.js';
import { jobRecord } from '../helpers/job-record.js';
import { HINTS, RUN_OUTCOMES } from '../helpers/rendering.js';

const WORKSPACE = 'https://acme.slack.com/';
const TRUSTED_PR = 'https://github.com/acme/docs/pull/7';
const REQUESTER = 'U0ALICE';

/** Pieces of hostile text: Slack's notifying syntax, disguised links, escapes, markup breakers. */
const FRAGMENTS = [
  '<!here>',
  '<!channel>',
  '<!everyone>',
  '<!subteam^S0TEAM|@docs-team>',
  '<!subteam^S0TEAM>',
  '<https://phish.example|https://github.com/acme/docs/pull/1>',
  '<https://phish.example>',
  '<@U0EVE>',
  '<@U0EVE|eve>',
  '<#C0SECRET|secret>',
  '<!date^1|tomorrow>',
  '&lt;!here&gt;',
  '&amp;',
  '&',
  '<',
  '>',
  '|',
  '`',
  '```',
  '*',
  '_',
  '\n',
  '\n>',
  ':emoji:',
  'https://evil.example/x',
  '\u0000',
  '\u202e',
  '😀',
];

/** A hostile string: a mix of the fragments and arbitrary text, sometimes very long. */
const hostile = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string()), { maxLength: 12 })
      .map((p) => p.join('')),
  },
  { weight: 1, arbitrary: fc.constantFrom(...FRAGMENTS).map((f) => f.repeat(800)) },
);

/** An address from the agent API: trusted, hostile, or over Slack's length limit. */
const prLink = fc.oneof(
  fc.constant(TRUSTED_PR),
  fc.constant(null),
  hostile,
  hostile.map((h) => `${TRUSTED_PR}${h}`),
  hostile.map((h) => `https://github.com/${h}`),
  fc.constant(`${TRUSTED_PR}?${'a'.repeat(3_100)}`),
  fc.constant('https://github.com@phish.example/x'),
  fc.constant('https://github.com@phish.example/acme/docs/pull/7'),
  fc.constant('https://evilgithub.com/acme/docs/pull/7'),
  fc.constant('https://gist.github.com/acme/docs/pull/7'),
  fc.constant('https://github.com.phish.example/acme/docs/pull/7'),
  fc.constant('https://github.com./acme/docs/pull/7'),
  fc.constant('http://github.com/acme/docs/pull/7'),
  fc.constant('https://github.com/login/oauth/authorize?client_id=x'),
  fc.constant('https://github.com/acme/docs/settings'),
);

const job = fc.record({
  instruction: hostile,
  requesterId: fc.oneof(fc.constant(REQUESTER), hostile),
  agentJobId: fc.oneof(fc.constant(null), hostile),
  prLink,
  repository: fc.oneof(fc.constant(null), hostile),
  ref: fc.oneof(fc.constant(null), hostile),
  model: fc.oneof(fc.constant(null), hostile),
  phase: fc.constantFrom(...JOB_PHASES),
  lastOutcome: fc.constantFrom(null, ...RUN_OUTCOMES),
  channelId: fc.oneof(fc.constant('C0DOCS'), hostile),
  privacy: fc.constantFrom(...JOB_PRIVACIES),
});

/** Every mrkdwn string in a message or view: its `text` and every mrkdwn text object. */
function mrkdwnTexts(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) mrkdwnTexts(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.type === 'mrkdwn' && typeof o.text === 'string') out.push(o.text);
    for (const [k, v] of Object.entries(o)) if (k !== 'text' || typeof v !== 'string') mrkdwnTexts(v, out);
  }
  return out;
}

/**
 * The checks every rendering must pass: no broadcast or group mention, and every `<…>` entity is
 * one the bot meant: a mention of someone it notifies, a conversation, a date, or a link to an
 * address it checked.
 */
function expectSafe(texts: string[], allowed: { mentions: string[]; urls: (string | undefined)[] }) {
  const urls = new Set(allowed.urls.filter((u): u is string => u !== undefined));
  for (const t of texts) {
    expect(t).not.toMatch(/<!(?!date\^)/);
    for (const [, inner] of t.matchAll(/<([^<>]*)>/g)) {
      const entity = inner as string;
      if (entity.startsWith('@')) expect(allowed.mentions).toContain(entity.slice(1));
      else if (entity.startsWith('#')) expect(entity).toMatch(/^#[CGD][A-Z0-9]+$/);
      else if (entity.startsWith('!date^')) expect(entity).toMatch(/^!date\^\d+\^[^|]+\|[^<>]*$/);
      else {
        const url = entity.split('|')[0]?.replace(/&amp;/g, '&');
        expect(urls, `a link to ${url}`).toContain(url);
      }
    }
  }
}

/**
 * The oracle for the pull request link, written apart from `src/slack/links.ts` so that a
 * looser host or path check there fails here: the renderers may link the job's own address
 * only when it is on `https://github.com` itself (not a look-alike, a subdomain, a trailing dot
 * or a user name before the host), leads to a pull request, and holds nothing that ends Slack's
 * link syntax. Looser than the real check (which also bounds the length), never stricter.
 */
const GITHUB_PULL_REQUEST = /^https:\/\/github\.com\/[^/]+\/[^/]+\/pull\/\d+/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const BREAKS_LINK = /[\s<>|\u0000-\u001f\u007f]/;
const trusted = (link: string | null) =>
  link !== null && GITHUB_PULL_REQUEST.test(link) && !BREAKS_LINK.test(link) ? link : undefined;
const mentionsOf = (...ids: string[]) => ids.filter((id) => /^[UW][A-Z0-9]{1,39}$/.test(id));

describe('every renderer, over hostile strings from people and the agent API', () => {
  it('the status card and its text', () => {
    fc.assert(
      fc.property(job, fc.integer({ min: 0, max: 10 ** 9 }), (j, elapsed) => {
        const record = jobRecord(j);
        const card = statusCard(record, record.createdAt + elapsed, HINTS);
        expectSafe([card.text, ...mrkdwnTexts(card.blocks)], {
          mentions: mentionsOf(record.requesterId),
          urls: [trusted(record.prLink)],
        });
        expect(blockProblems(card.blocks, 50)).toEqual([]);
        expect(card.text.length).toBeLessThanOrEqual(4_000);
        for (const b of card.blocks) {
          for (const el of (b.elements as { url?: string }[] | undefined) ?? [])
            if (el.url) expect(el.url).toBe(trusted(record.prLink));
        }
        expectSafe([cardText(record, HINTS)], {
          mentions: mentionsOf(record.requesterId),
          urls: [trusted(record.prLink)],
        });
      }),
      { numRuns: 300 },
    );
  });

  it('outcome posts', () => {
    fc.assert(
      fc.property(
        job,
        fc.constantFrom(...RUN_OUTCOMES),
        fc.array(hostile, { maxLength: 3 }),
        (j, outcome, extra) => {
          const record = jobRecord(j);
          const notify = [record.requesterId, ...extra];
          const post = outcomePost(outcome, record, notify, 86_400_000, HINTS);
          expectSafe([post.text, ...mrkdwnTexts(post.blocks)], {
            mentions: mentionsOf(...notify),
            urls: [trusted(record.prLink)],
          });
          expect(blockProblems(post.blocks, 50)).toEqual([]);
          expect(outcomeText(outcome, record, notify, 1, HINTS).length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('lists and the App Home', () => {
    fc.assert(
      fc.property(fc.array(job, { minLength: 0, maxLength: 16 }), (js) => {
        const records = js.map((j, i) => jobRecord({ ...j, id: i + 1 }));
        // Someone else's view: jobs asked for in private are listed in their shorter form.
        const ctx = {
          workspaceUrl: WORKSPACE,
          now: 1_800_000_000_000,
          prLinkHosts: HINTS.prLinkHosts,
          viewer: { userId: 'U0BOB' },
        };
        const urls = records.flatMap((r) => [
          trusted(r.prLink),
          permalink(WORKSPACE, r.channelId, r.cardTs ?? '', r.threadTs ?? ''),
        ]);
        for (const list of [
          jobListMessage(records, { kind: 'mine' }, ctx),
          jobListMessage(records, { kind: 'channel', channelId: 'C0DOCS' }, ctx),
        ]) {
          expectSafe([list.text, ...mrkdwnTexts(list.blocks)], { mentions: [], urls });
          expect(blockProblems(list.blocks, 50)).toEqual([]);
        }
        const home = homeView(records, usage(HINTS), ctx);
        expectSafe(mrkdwnTexts(home), { mentions: [], urls });
        expect(viewProblems(home)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('the Send to docs agent modal', () => {
    fc.assert(
      fc.property(hostile, hostile, fc.oneof(fc.constant(undefined), hostile), (message, author, link) => {
        const view = sendModal({
          message: { text: message, author },
          metadata: {
            channel: 'C0DOCS',
            ts: '1.2',
            author,
            ...(link === undefined ? {} : { permalink: link }),
          },
          maxPromptChars: 10_000,
        });
        expectSafe(mrkdwnTexts(view), {
          // A person's id, U… or W… (Enterprise Grid), is mentioned; an app's name is text.
          mentions: mentionsOf(author),
          urls: [link?.startsWith('https:') && !BREAKS_LINK.test(link) ? link : undefined],
        });
        expect(viewProblems(view)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('private notes, refusals and errors', () => {
    fc.assert(
      fc.property(hostile, hostile, (word, detail) => {
        const texts = [
          commandText.unknownSubcommand(word, usage(HINTS)),
          text.cannotPost(word),
          text.notInChannel(word),
          text.followUpNoJob(word),
          text.pollRefused(word),
          text.restartedBeforeCreate(word),
          text.followUpRestarted(word),
          agentErrorText(new AgentBadRequestError(detail), 'job'),
          agentErrorText(new AgentBadRequestError(detail), 'follow-up'),
          agentErrorText(
            new AgentRateLimitedError('limited', { resetAt: new Date(1_800_000_000_000) }),
            'job',
          ),
          refusalText({ reason: 'rate', retryAt: new Date(1_800_000_000_000), limit: 3 }),
          refusalText({ reason: 'guest' }),
          usage({ ...HINTS, asideMarker: word }),
        ];
        expectSafe(texts, { mentions: mentionsOf(word), urls: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('the direct message sent when a job’s thread is gone', () => {
    fc.assert(
      fc.property(hostile, hostile, (channel, code) => {
        const note = md`${rescueIntro(channel, code)}\n${recordedMrkdwn(text.emptyFollowUp())}`;
        expectSafe([note], { mentions: [], urls: [] });
      }),
      { numRuns: 200 },
    );
  });
});
