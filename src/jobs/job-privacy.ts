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

  return {
    async settle(job) {
      // A direct message is known from its id; the others were said by the request, or are asked.
      if (job.privacy !== 'unknown' || isDirectMessage(job.channelId)) return job;
      const answer = await audiences.of(job.channelId);
      return answer === 'unknown' ? job : record(job, answer);
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
