import { joinMrkdwn, type Mrkdwn, md, userMention } from '../../slack/mrkdwn.js';

/** Something taken back by a stop before it reached the agent. */
export interface Withdrawn {
  kind: 'create' | 'follow_up';
  authorId: string;
}

/** Most withdrawn instructions named one by one; the rest are counted. */
const LISTED = 5;

const describe = (run: Withdrawn): Mrkdwn =>
  run.kind === 'create' ? md`the first instruction` : md`a reply from ${userMention(run.authorId)}`;

/**
 * What the bot says when someone presses stop on a job's session. The agent API cannot cancel
 * a run it has: the text never claims more than was done.
 */
export const stopText = {
  stopped: ({
    by,
    withdrawn,
    running,
  }: {
    by: string;
    withdrawn: readonly Withdrawn[];
    running: boolean;
  }) => {
    const listed = withdrawn.slice(0, LISTED).map(describe);
    const more = withdrawn.length - listed.length;
    const names = joinMrkdwn(more > 0 ? [...listed, md`${more} more`] : listed, md`, `);
    const taken =
      withdrawn.length > 0
        ? md`Withdrawn before it reached the docs agent: ${names}.`
        : md`Nothing was waiting to be withdrawn.`;
    const goesOn = running
      ? md`The agent already has the instruction it is working on and cannot be interrupted: it will finish, and its outcome will still be posted in this thread.`
      : md`Nothing else was running.`;
    return md`:octagonal_sign: ${userMention(by)} pressed stop. ${taken} ${goesOn}`;
  },
  notRecorded: () =>
    md`:warning: I could not record your stop just now, so what waits may still be sent to the docs agent. Please press stop again in a moment.`,
  notYours: (requesterId: string) =>
    md`:no_entry: Only ${userMention(requesterId)}, who asked for this job, or someone who may instruct the docs agent here can stop it. Nothing was stopped.`,
};
