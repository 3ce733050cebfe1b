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
import { agentErrorText, refusalText } from '../../src/blocks/refusal-texts.js';

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
