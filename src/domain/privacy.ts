/**
 * Who may read what was asked for in a job: the words belong to the place they were written in
 * (DESIGN: nothing may quote them somewhere with a wider audience). Recorded when the job is
 * accepted, since a channel's audience may change later and the words were written for the one
 * it had then.
 */

/**
 * Where a job was asked for, by who can read it there:
 * - `public`: a public channel; anyone in the workspace.
 * - `private`: a private channel or a group direct message; its members only.
 * - `direct`: a direct message with the bot (its Messages tab); the requester only.
 * - `pane`: a thread of the assistant pane (also a direct message with the bot); the requester only.
 * - `unknown`: not said by the request and not yet asked of Slack (a channel job is accepted so,
 *   and settled as it starts: `jobs/job-privacy.ts`), Slack could not say in time, or the job was
 *   recorded before privacy was; treated as private (fail closed).
 */
export type JobPrivacy = 'public' | 'private' | 'direct' | 'pane' | 'unknown';

/** Every privacy, as the store may hold it. */
export const JOB_PRIVACIES: readonly JobPrivacy[] = ['public', 'private', 'direct', 'pane', 'unknown'];

/** Whether anyone in the workspace may read the job's words and open its thread. Only `public`. */
export const isPublicJob = (job: { privacy: JobPrivacy }): boolean => job.privacy === 'public';

/**
 * Who will read a rendering that shows jobs: a person (`userId`), and the conversation it is
 * shown in (`channelId`, whose members all see it). A notification channel is an audience with
 * a conversation and no one person.
 */
export interface Audience {
  userId?: string | undefined;
  channelId?: string | undefined;
}

/**
 * Whether `audience` may read a job's words and be shown where it lives: anyone for a public job;
 * otherwise only its requester, or the people of the job's own conversation.
 */
export function mayShowJob(
  job: { privacy: JobPrivacy; channelId: string; requesterId: string },
  audience: Audience,
): boolean {
  return (
    isPublicJob(job) ||
    (audience.userId !== undefined && audience.userId === job.requesterId) ||
    (audience.channelId !== undefined && audience.channelId === job.channelId)
  );
}
