import { describe, expect, it } from 'vitest';
import { stepText, waitText } from '../../src/blocks/step-texts.js';
import { mrkdwnToPlain } from '../../src/slack/mrkdwn.js';

const LINK = 'https://acme.slack.com/archives/C0DOCS/p1700000000000100';

describe('stepText', () => {
  it('says for every refusal that nothing was started, and what to change', () => {
    const expected: Record<keyof typeof stepText, string> = {
      notUnderstood: "Check the step's settings in Workflow Builder.",
      noInstruction: 'Give the step what the docs agent should do.',
      direct: 'Pick a channel for the step',
      unknownProject: "Leave the project empty to use the channel's",
      threadHasJob: 'reply in that thread to send it a follow-up',
    };
    for (const [name, advice] of Object.entries(expected)) {
      const said = stepText[name as keyof typeof stepText]();
      expect(said, name).toContain('nothing was started');
      expect(said, name).toContain(advice);
    }
  });

  it('reads the same as plain text, as Slack shows a step error', () => {
    for (const said of Object.values(stepText).map((f) => f())) {
      expect(mrkdwnToPlain(said)).toBe(said);
    }
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
