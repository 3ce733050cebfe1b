import { md } from '../../slack/mrkdwn.js';

/**
 * What the bot tells a person privately about an edit or deletion of an instruction: a prompt the
 * agent has cannot be taken back.
 */
export const editText = {
  editedLate: () =>
    md`:pencil2: The docs agent already has the earlier version of your message, so this edit does not reach it. To change course, reply in the thread with what you want now.`,
  deletedLate: () =>
    md`:wastebasket: The docs agent already has the message you deleted; deleting it does not take it back. To change course, reply in the thread with what you want now.`,
  editTooLong: (length: number, max: number) =>
    md`:straight_ruler: Your edit is ${length} characters long; the limit is ${max}. The earlier version is what the docs agent gets.`,
  withdrawn: () =>
    md`:information_source: After your edit that message is no longer an instruction for the docs agent, so it will not be sent to the agent.`,
  notRecorded: () =>
    md`:warning: I could not record your edit or deletion just now, so the docs agent may still get the earlier version. Please try again in a moment.`,
};
