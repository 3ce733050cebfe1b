import { describe, expect, it } from 'vitest';
import type { RefusalReason } from '../../src/access/access-policy.js';
import {
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';
import {
  agentErrorText,
  refusalText,
  type StepRefusal,
  stepRefusalText,
  threadHasJobText,
  waitText,
} from '../../src/blocks/refusal-texts.js';
import { chatHabits } from '../helpers/workflow-steps.js';

const RESET = new Date('2026-09-01T13:00:00.000Z');
const RESET_DATE = `<!date^${RESET.getTime() / 1000}^{time}|13:00 UTC>`;

describe('agentErrorText', () => {
  it('says whether a job or a reply was not sent, for every refusal', () => {
    const refusals = [
      new AgentRateLimitedError('429'),
      new AgentUnauthorizedError('401', { status: 401 }),
      new AgentBadRequestError('prompt is empty'),
      new AgentUnavailableError('503'),
      new Error('a bug'),
    ];
    for (const error of refusals) {
      expect(agentErrorText(error, 'job'), error.name).toContain('No job was started.');
      expect(agentErrorText(error, 'follow-up'), error.name).toContain(
        'This reply was not sent to the agent.',
      );
    }
  });

  it('gives the time the hourly limit resets, when the API said', () => {
    expect(agentErrorText(new AgentRateLimitedError('429', { resetAt: RESET }), 'job')).toBe(
      `:hourglass: The documentation project has reached its hourly limit of agent instructions. No job was started. You can try again ${RESET_DATE}.`,
    );
    expect(agentErrorText(new AgentRateLimitedError('429'), 'job')).toContain('Try again later in the hour.');
  });

  it('names the status of a refused key and who can renew it', () => {
    expect(agentErrorText(new AgentUnauthorizedError('x', { status: 403 }), 'job')).toContain(
      "refused this bot's API key (HTTP 403)",
    );
    expect(agentErrorText(new AgentUnauthorizedError('x'), 'job')).toContain('(HTTP 401)');
  });

  it("quotes the API's explanation inert, in a code span, at most 300 characters", () => {
    const said = agentErrorText(
      new AgentBadRequestError(`<!channel> see <https://phish.example|docs> \`${'d'.repeat(400)}`),
      'job',
    );
    expect(said).toMatch(
      /^:warning: The docs agent API rejected the instruction: `&lt;!channel&gt; see &lt;https/,
    );
    expect(said).not.toMatch(/<[!h]/);
    const [, detail] = /`([^`]*)`/.exec(said) ?? [];
    expect(detail?.replace(/&lt;|&gt;/g, '<').length).toBeLessThanOrEqual(300);
  });

  it('reads a 404 as a missing project for a job and as a forgotten job for a reply', () => {
    expect(agentErrorText(new AgentNotFoundError('404'), 'job')).toContain(
      "does not know this bot's documentation project (HTTP 404)",
    );
    expect(agentErrorText(new AgentNotFoundError('404'), 'follow-up')).toContain(
      'no longer knows this job (HTTP 404)',
    );
  });

  it('never invites a resend when the outcome is unknown or the answer was unusable', () => {
    for (const error of [
      new AgentOutcomeUnknownError('reset'),
      new AgentInvalidResponseError('not a job'),
      new AgentResponseTooLargeError('too long', { limitBytes: 1 }),
    ]) {
      expect(agentErrorText(error, 'job')).toContain(
        'cannot tell whether the job started. I will not resend it',
      );
      expect(agentErrorText(error, 'follow-up')).toContain('whether the agent received this reply');
    }
  });

  it('says the API is unreachable, or that the fault is the bot’s', () => {
    expect(agentErrorText(new AgentUnavailableError('503'), 'job')).toContain('is not reachable right now');
    expect(agentErrorText('thrown string', 'job')).toContain('Something went wrong on my side');
  });
});

describe('refusalText', () => {
  it('has its own words for each reason', () => {
    const reasons: RefusalReason[] = ['team', 'channel', 'direct', 'user', 'guest', 'unverified'];
    const said = reasons.map((reason) => refusalText({ reason }));
    expect(new Set(said).size).toBe(reasons.length);
    expect(refusalText({ reason: 'guest' })).toContain('Guest accounts cannot instruct the docs agent');
    expect(refusalText({ reason: 'user' })).toContain('Ask an admin to add you.');
    expect(refusalText({ reason: 'team' })).toContain('serves another Slack workspace');
    expect(refusalText({ reason: 'channel' })).toContain('not enabled in this channel');
    expect(refusalText({ reason: 'direct' })).toContain('takes no instructions by direct message here');
    expect(refusalText({ reason: 'unverified' })).toContain('Slack could not confirm who you are');
  });

  it("names a person's hourly limit and when it frees up", () => {
    expect(refusalText({ reason: 'rate', limit: 5, retryAt: RESET })).toBe(
      `:hourglass: You have given the docs agent 5 instructions in the last hour, the most one person may, so this one was not sent. You can try again ${RESET_DATE}.`,
    );
    expect(refusalText({ reason: 'rate' })).toBe(
      ':hourglass: You have given the docs agent the allowed number of instructions in the last hour, the most one person may, so this one was not sent.',
    );
  });

  it("names the project's hourly limit", () => {
    expect(refusalText({ reason: 'project_rate', limit: 100, retryAt: RESET })).toContain(
      `hourly limit of 100 agent instructions, so this one was not sent. You can try again ${RESET_DATE}.`,
    );
    expect(refusalText({ reason: 'project_rate' })).toBe(
      ':hourglass: The documentation project has reached its hourly limit of its agent instructions, so this one was not sent.',
    );
  });

  it('says "later" rather than failing for a time that is no time', () => {
    expect(refusalText({ reason: 'rate', limit: 5, retryAt: new Date(Number.NaN) })).toContain(
      'You can try again later.',
    );
  });
});

const LINK = 'https://acme.slack.com/archives/C0DOCS/p1700000000000100';
const SUBJECT = { userId: 'W0GRIDUSER', channelId: 'C0DOCS' };
const RETRY_AT = new Date('2026-03-12T14:05:30Z');

/** Every way a recorded step job can fail to start, with words its builder must find in the error. */
const REFUSALS: [string, StepRefusal, string][] = [
  [
    'channel',
    { reason: 'channel' },
    '@W0GRIDUSER may not instruct the docs agent in #C0DOCS: the docs agent is not enabled in that channel',
  ],
  [
    'user',
    { reason: 'user' },
    '@W0GRIDUSER may not instruct the docs agent in #C0DOCS: @W0GRIDUSER is not on the list',
  ],
  ['guest', { reason: 'guest' }, '@W0GRIDUSER may not instruct the docs agent in #C0DOCS: guest accounts'],
  ['team', { reason: 'team' }, 'Start the job for a person of that workspace'],
  ['direct', { reason: 'direct' }, 'Pick a channel for the step'],
  ['unverified', { reason: 'unverified' }, 'Slack could not confirm who @W0GRIDUSER is'],
  [
    'rate',
    { reason: 'rate', limit: 3, retryAt: RETRY_AT },
    '@W0GRIDUSER has given the docs agent 3 instructions in the last hour, the most one person may. Nothing was started. Run the workflow again after 14:05 UTC.',
  ],
  ['rate, no time', { reason: 'rate' }, 'Run the workflow again later.'],
  [
    'project_rate',
    { reason: 'project_rate', limit: 100, retryAt: RETRY_AT },
    'limit of 100 agent instructions',
  ],
  [
    'too_long',
    { reason: 'too_long', length: 12_345, max: 10_000 },
    "The step's instruction is 12,345 characters long; the limit is 10,000 (MAX_PROMPT_CHARS). Nothing was started. Shorten the step's instruction.",
  ],
  [
    'held_too_long',
    { reason: 'held_too_long' },
    "Slack could not confirm who @W0GRIDUSER is before the step's time ran out",
  ],
  ['not_in_channel', { reason: 'not_in_channel' }, 'Invite the bot to that channel (/invite @docs-agent)'],
  ['cannot_post', { reason: 'cannot_post', code: 'channel_not_found' }, '#C0DOCS (channel_not_found)'],
  ['restarted_before_post', { reason: 'restarted_before_post' }, 'Run the workflow again.'],
  [
    'restarted_before_create',
    { reason: 'restarted_before_create' },
    "If no result appears in the job's thread in #C0DOCS, run the workflow again.",
  ],
  [
    'agent, rate limited',
    { reason: 'agent', error: new AgentRateLimitedError('429', { resetAt: RETRY_AT }) },
    'Run the workflow again after 14:05 UTC.',
  ],
  [
    'agent, key refused',
    { reason: 'agent', error: new AgentUnauthorizedError('401', { status: 401 }) },
    "The bot's operator must renew its admin API key.",
  ],
  [
    'agent, bad request',
    { reason: 'agent', error: new AgentBadRequestError('Prompt not accepted') },
    "The docs agent API rejected the instruction: Prompt not accepted. Nothing was started. Change the step's instruction.",
  ],
  ['agent, not found', { reason: 'agent', error: new AgentNotFoundError('404') }, 'documentation project'],
  [
    'agent, outcome unknown',
    { reason: 'agent', error: new AgentOutcomeUnknownError('reset') },
    'it is not known whether the job started',
  ],
  [
    'agent, invalid answer',
    { reason: 'agent', error: new AgentInvalidResponseError('bad') },
    'it is not known whether the job started',
  ],
  ['agent, unavailable', { reason: 'agent', error: new AgentUnavailableError('503') }, 'in a few minutes'],
  ['agent, anything else', { reason: 'agent', error: new Error('boom') }, 'Run the workflow again.'],
];

describe('stepRefusalText', () => {
  it.each(REFUSALS)(
    '%s: says why, in the third person, and what the builder can change',
    (_n, refusal, words) => {
      const said = stepRefusalText(refusal, SUBJECT);
      expect(said).toContain(words);
      expect(chatHabits(said)).toEqual([]);
    },
  );

  it('covers every reason the access policy gives', () => {
    const reasons = new Set(REFUSALS.map(([, refusal]) => refusal.reason));
    for (const reason of ['team', 'channel', 'direct', 'user', 'guest', 'rate', 'project_rate', 'unverified'])
      expect(reasons.has(reason as StepRefusal['reason']), reason).toBe(true);
  });

  it('echoes no id that is not a Slack id', () => {
    const said = stepRefusalText({ reason: 'user' }, { userId: '<!channel>', channelId: 'C0 <!here>' });
    expect(said).toContain('the person named may not instruct the docs agent in the step');
    expect(said).not.toContain('<!');
  });
});

describe('threadHasJobText', () => {
  it('says what the builder can change, with no chat habits', () => {
    const said = threadHasJobText();
    expect(said).toContain('Leave "Reply under message" empty to start a new thread');
    expect(chatHabits(said)).toEqual([]);
  });
});

describe('waitText', () => {
  it('points to the job id output when no job has that id', () => {
    expect(waitText.noSuchJob()).toContain('Use the job id output of the "Start a docs agent job" step.');
  });

  it('links the thread when the job never started, if its address is known', () => {
    expect(waitText.neverStarted(LINK)).toBe(
      `The docs agent job did not start, or it is not known whether it did. Its thread says why: ${LINK}`,
    );
    expect(waitText.neverStarted(undefined)).toBe(
      'The docs agent job did not start, or it is not known whether it did.',
    );
  });

  it("says how long the job has run against Slack's 15 minutes, and where its outcome goes", () => {
    expect(waitText.stillRunning(14, LINK)).toBe(
      `The docs agent job is still working after 14 minutes, and Slack ends a workflow step after 15. Its outcome will be posted in its thread: ${LINK}`,
    );
    expect(waitText.stillRunning(14, undefined).endsWith('Its outcome will be posted in its thread.')).toBe(
      true,
    );
  });
});
