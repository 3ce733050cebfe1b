import { describe, expect, it } from 'vitest';
import { ON_BEHALF_OF_SETTING, stepText } from '../../../src/features/workflow-steps/wording.js';
import { chatHabits } from '../../helpers/workflow-steps.js';

describe('stepText', () => {
  const all: Record<keyof typeof stepText, string> = {
    notUnderstood: stepText.notUnderstood(),
    noInstruction: stepText.noInstruction(),
    direct: stepText.direct(),
    unknownProject: stepText.unknownProject(),
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
