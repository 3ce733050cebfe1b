import type { AccessDecision, AccessPolicy } from '../access/access-policy.js';
import type { JobRecord } from '../store/types.js';
import { withTimeout } from '../util/waits.js';

/**
 * Whether a person may instruct the agent where a job was asked, for a click or a press on it
 * ("Try again", stop) that Slack wants answered within 3 seconds. In the assistant pane, "where"
 * is the channel recorded with the job (the one its project comes from), not wherever the pane
 * is now. Fails closed (`unverified`) when Slack cannot say within `ms`.
 */
export async function accessWhereAsked(
  access: Pick<AccessPolicy, 'check'>,
  job: Pick<JobRecord, 'channelId' | 'contextChannelId'>,
  who: { userId: string; teamId: string | undefined },
  ms: number,
): Promise<AccessDecision> {
  const decision = await withTimeout(
    access.check({
      teamId: who.teamId,
      channelId: job.channelId,
      userId: who.userId,
      contextChannelId: job.contextChannelId ?? undefined,
    }),
    ms,
  ).catch(() => undefined);
  return decision ?? { allowed: false, reason: 'unverified' };
}
