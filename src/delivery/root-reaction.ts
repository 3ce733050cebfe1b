import { statusReaction } from '../blocks/status-card.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { JobRecord, JobsStore } from '../store/types.js';

/**
 * Swaps the status emoji on a job thread's root to match its status card. Cosmetic: a failure is
 * logged and never fails the card update it goes with.
 */
export function createReactionSync(deps: {
  store: Pick<JobsStore, 'setRootReaction'>;
  slack: Pick<SlackGateway, 'addReaction' | 'removeReaction'>;
  logger: Logger;
}): (job: JobRecord) => Promise<void> {
  const { store, slack, logger } = deps;
  return async (job) => {
    const wanted = statusReaction(job);
    if (wanted === job.rootReaction || !job.threadTs) return;
    const root = { channel: job.channelId, ts: job.threadTs };
    try {
      if (job.rootReaction) await slack.removeReaction({ ...root, name: job.rootReaction });
      if (wanted) await slack.addReaction({ ...root, name: wanted });
      await store.setRootReaction(job.id, wanted);
    } catch (error) {
      logger.warn('could not update the status emoji on the thread root', { jobId: job.id, error });
    }
  };
}
