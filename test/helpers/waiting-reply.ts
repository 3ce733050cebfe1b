import type { JobRecord, RunRecord } from '../../src/store/types.js';
import { TEAM } from './fake-network.js';
import { CHANNEL } from './job-world.js';
import { createListenerWorld, type ListenerWorld } from './listener-deps.js';

/** Who wrote the reply, and where it is. */
export const HELPER = 'U0HELPER';
export const REPLY_TS = '1700000500.000500';
export const REPLY_TEXT = 'Also cover the SDK';

/** A listener world with an active job and `HELPER`'s reply in its thread, recorded and still waiting. */
export interface WaitingReply {
  w: ListenerWorld;
  job: JobRecord;
  /** The reply's run, as the store has it now. */
  reply(): Promise<RunRecord | undefined>;
  /** Marks the reply sent, as if the agent had it already. */
  markSent(): Promise<RunRecord | undefined>;
}

export async function waitingReply(
  options: Parameters<typeof createListenerWorld>[1] = {},
): Promise<WaitingReply> {
  const w = createListenerWorld({}, options);
  const { job } = await w.activeJob();
  await w.jobs.acceptReply({
    teamId: TEAM,
    channelId: CHANNEL,
    threadTs: job.threadTs ?? '',
    messageTs: REPLY_TS,
    userId: HELPER,
    text: REPLY_TEXT,
  });
  const reply = async () => (await w.runs(job.id)).find((r) => r.messageTs === REPLY_TS);
  return {
    w,
    job,
    reply,
    async markSent() {
      const run = await reply();
      await w.store.apply({ jobId: job.id, run: { id: run?.id ?? 0, patch: { state: 'sent' } } }, Date.now());
      return run;
    },
  };
}
