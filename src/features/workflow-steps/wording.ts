import { NOTHING, person } from '../../blocks/refusal-texts.js';

/** The setting that lets a workflow name someone other than the person who used it. */
export const ON_BEHALF_OF_SETTING = 'WORKFLOW_ON_BEHALF_OF_USER_IDS';

/**
 * Why a step was refused before anything was recorded: its inputs. Plain text, for the person
 * who built the workflow, as every step's words are (see `blocks/refusal-texts.ts`).
 */
export const stepText = {
  notUnderstood: () =>
    "The docs agent could not read this step's inputs, so it did nothing. Check the step's settings in Workflow Builder.",
  noInstruction: () =>
    `The step's instruction is empty. ${NOTHING} Give the step what the docs agent should do.`,
  direct: () =>
    `A direct message cannot be the step's channel: jobs run in channels, where everyone can follow the thread. ${NOTHING} Pick a channel for the step.`,
  unknownProject: () =>
    `The docs agent does not serve the documentation project the step names. ${NOTHING} Leave the project empty to use the channel's, or ask the bot's operator which projects it serves.`,
  /** Neither the person who used the workflow nor "On behalf of": nobody to start the job for. */
  noPerson: () =>
    `Slack did not say who used the workflow, and "On behalf of" is empty, so there is no person to start the job for. ${NOTHING} Start the workflow from a link, a button or a form, or name a person in "On behalf of" (the bot's operator must list them in ${ON_BEHALF_OF_SETTING}).`,
  /**
   * "On behalf of" names someone the operator has not allowed, in a workflow Slack named no person
   * for (a schedule, an event, one built before the step took one); `settingOn`: the setting lists
   * someone.
   */
  onBehalfOfRefused: (named: string, settingOn: boolean) => {
    const listed = settingOn ? `which does not list ${person(named)}` : 'which is not set';
    return `The step names ${person(named)} in "On behalf of", but the docs agent starts a workflow's job for the person who used the workflow, and for someone else only when ${ON_BEHALF_OF_SETTING} lists them, ${listed}. ${NOTHING} Slack did not say who used this workflow (it does not for a scheduled or event-triggered one). Ask the bot's operator to add ${person(named)} to ${ON_BEHALF_OF_SETTING}, or start the workflow from a link, a button or a form and leave "On behalf of" empty.`;
  },
  /** "On behalf of" names someone else in a workflow a person used (`usedBy`, as Slack verified it). */
  onBehalfOfWithPerson: (named: string, usedBy: string) =>
    `The step names ${person(named)} in "On behalf of", but ${person(usedBy)} used the workflow, and a job started by a person is that person's own: "On behalf of" is only for workflows no person starts (a schedule or an event), for people listed in ${ON_BEHALF_OF_SETTING}. ${NOTHING} Leave "On behalf of" empty to start the job for ${person(usedBy)}.`,
  /** The step's job could not be recorded, and Slack will not deliver the step again. */
  notRecorded: () =>
    `The docs agent could not record the step's job. ${NOTHING} Run the workflow again in a few minutes.`,
};
