import { describe, expect, it } from 'vitest';
import {
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';
import {
  ON_BEHALF_OF_SETTING,
  type StepRefusal,
  stepRefusalText,
  stepText,
  waitText,
} from '../../src/blocks/step-texts.js';
import { mrkdwnToPlain } from '../../src/slack/mrkdwn.js';

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

/** What a text written for a chat would show that a workflow's activity must not. */
function chatHabits(said: string): string[] {
  const found: string[] = [];
  if (/:[a-z0-9_+-]+:/.test(said)) found.push('an emoji code');
  if (/\byou(r)?\b/i.test(said)) found.push('"you"');
  if (/\bI\b/.test(said)) found.push('"I"');
  if (/run \/docs-agent|run the command/i.test(said)) found.push('"run /docs-agent"');
  if (/<[@#!]/.test(said)) found.push('Slack markup');
  if (mrkdwnToPlain(said) !== said) found.push('text that is not plain');
  return found;
}

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

describe('stepText', () => {
  const all: Record<keyof typeof stepText, string> = {
    notUnderstood: stepText.notUnderstood(),
    noInstruction: stepText.noInstruction(),
    direct: stepText.direct(),
    unknownProject: stepText.unknownProject(),
    threadHasJob: stepText.threadHasJob(),
    noPerson: stepText.noPerson(),
    onBehalfOfRefused: stepText.onBehalfOfRefused('U0BOB', false),
    onBehalfOfWithPerson: stepText.onBehalfOfWithPerson('U0BOB', 'U0ALICE'),
    notRecorded: stepText.notRecorded(),
  };

  it('says what the builder can change, with no chat habits', () => {
    const advice: Record<keyof typeof stepText, string> = {
      notUnderstood: "Check the step's settings in Workflow Builder.",
      noInstruction: 'Give the step what the docs agent should do.',
      direct: "A direct message cannot be the step's channel",
      unknownProject: "Leave the project empty to use the channel's",
      threadHasJob: 'Leave "Reply under message" empty to start a new thread',
      noPerson: 'Start the workflow from a link, a button or a form',
      onBehalfOfRefused: 'leave "On behalf of" empty',
      onBehalfOfWithPerson: 'Leave "On behalf of" empty to start the job for @U0ALICE',
      notRecorded: 'Run the workflow again in a few minutes.',
    };
    for (const [name, said] of Object.entries(all)) {
      expect(said, name).toContain(advice[name as keyof typeof stepText]);
      expect(chatHabits(said), name).toEqual([]);
    }
  });

  it('refusing a named person names the setting, whether it is off or does not list them', () => {
    const off = stepText.onBehalfOfRefused('U0BOB', false);
    expect(off).toContain(`The step names @U0BOB in "On behalf of"`);
    expect(off).toContain(`${ON_BEHALF_OF_SETTING} lists them, which is not set`);
    const unlisted = stepText.onBehalfOfRefused('U0BOB', true);
    expect(unlisted).toContain(`${ON_BEHALF_OF_SETTING} lists them, which does not list @U0BOB`);
    expect(unlisted).toContain('Slack did not say who used this workflow');
    expect(unlisted).toContain(`Ask the bot's operator to add @U0BOB to ${ON_BEHALF_OF_SETTING}`);
    expect(ON_BEHALF_OF_SETTING).toBe('WORKFLOW_ON_BEHALF_OF_USER_IDS');
  });

  it("refusing to name someone in a workflow a person used says the job is that person's", () => {
    const said = stepText.onBehalfOfWithPerson('U0SERVICE', 'U0ALICE');
    expect(said).toContain("@U0ALICE used the workflow, and a job started by a person is that person's own");
    expect(said).toContain(ON_BEHALF_OF_SETTING);
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
