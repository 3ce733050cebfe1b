import type { JobPrivacy } from '../domain/privacy.js';
import { isDirectMessage } from '../slack/ids.js';
import type { JobRecord } from '../store/types.js';
import type { JobContext } from './job-context.js';

/**
 * Slack's word on who can read a job's channel, asked in background work only: accepting a job
 * records what the request itself said (else `unknown`, treated as private), so Slack's
 * acknowledgement never waits for `conversations.info`.
 */
export interface JobPrivacyChecks {
  /**
   * A job recorded as `unknown` in a channel, with Slack's answer recorded: called as the job
   * starts, before anything shows it to another audience. A job Slack says nothing sure about
   * stays `unknown`. Never rejects.
   */
  settle(job: JobRecord): Promise<JobRecord>;
  /**
   * {@link JobPrivacyChecks.settle}, for a caller that may record the answer in a write of its own:
   * `take()` hands over the answer to record if it is in (undefined: none, or not yet); one that
   * comes after `take()` is recorded as soon as it comes, and `done()` (which waits for that)
   * records one that no `take()` asked for. Never rejects. A taken answer whose write did not
   * apply is not recorded: the job no longer starts here (another caller starts it and asks
   * again, or it was withdrawn), and meanwhile counts as private.
   */
  settleAlong(job: JobRecord): { take(): JobPrivacy | undefined; done(): Promise<void> };
  /**
   * A job recorded as `public`, with the stricter of that and Slack's current word (remembered a
   * minute): a channel made private since the job was asked must not have its words told
   * elsewhere. `private` is recorded; `unknown` only counts for this rendering. Never rejects.
   */
  recheck(job: JobRecord): Promise<JobRecord>;
}

export function createJobPrivacyChecks(
  ctx: Pick<JobContext, 'store' | 'audiences' | 'logger' | 'now'>,
): JobPrivacyChecks {
  const { store, audiences, logger, now } = ctx;

  /** Records a privacy Slack gave; a failed write keeps the stricter answer for this rendering. */
  const record = async (job: JobRecord, privacy: 'public' | 'private'): Promise<JobRecord> => {
    try {
      await store.apply({ jobId: job.id, job: { privacy } }, now());
    } catch (error) {
      logger.warn('could not record who can read a job’s channel', { jobId: job.id, error });
      // Only a stricter answer may be used unrecorded: an unrecorded `public` could not be checked.
      if (privacy === 'public') return job;
    }
    return { ...job, privacy };
  };

  /** Slack's word to record for a job recorded as `unknown` in a channel; undefined: nothing to record. */
  const ask = async (job: JobRecord): Promise<'public' | 'private' | undefined> => {
    // A direct message is known from its id; the others were said by the request, or are asked.
    if (job.privacy !== 'unknown' || isDirectMessage(job.channelId)) return undefined;
    const answer = await audiences.of(job.channelId);
    return answer === 'unknown' ? undefined : answer;
  };

  return {
    async settle(job) {
      const answer = await ask(job);
      return answer === undefined ? job : record(job, answer);
    },

    settleAlong(job) {
      let answer: 'public' | 'private' | undefined;
      let handed: 'not yet' | 'taken' | 'late' = 'not yet';
      const asked = ask(job).then(async (said) => {
        answer = said;
        if (said !== undefined && handed === 'late') await record(job, said);
      });
      return {
        take: () => {
          handed = answer === undefined ? 'late' : 'taken';
          return answer;
        },
        async done() {
          await asked;
          if (answer !== undefined && handed === 'not yet') await record(job, answer);
        },
      };
    },

    async recheck(job) {
      if (job.privacy !== 'public') return job;
      const answer = await audiences.of(job.channelId);
      if (answer === 'public') return job;
      if (answer === 'unknown') return { ...job, privacy: 'unknown' };
      logger.info('a job’s channel was made private after it was asked', { jobId: job.id });
      return record(job, 'private');
    },
  };
}
