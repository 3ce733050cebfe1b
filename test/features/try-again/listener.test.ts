import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tryAgain, tryAgainText } from '../../../src/features/try-again/listener.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import {
  ackSpy,
  boltActionArgs,
  createListenerWorld,
  type ListenerWorld,
} from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof tryAgain>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld({ ALLOWED_USER_IDS: `${REQUESTER},U0OTHER` });
});
afterEach(() => w.stop());

/** A job whose first run failed, its card posted in its thread. */
async function failedJob() {
  const { job } = await w.insertJob();
  await w.store.apply(
    {
      jobId: job.id,
      job: {
        phase: 'idle',
        lastOutcome: 'failed',
        threadTs: '1700000000.000001',
        cardTs: '1700000000.000001',
      },
    },
    w.clock.at,
  );
  return job;
}

/** Calls the listener with Bolt's arguments for a click on "Try again". */
async function click(value: string, user = REQUESTER) {
  const body = {
    type: 'block_actions',
    team: { id: TEAM },
    user: { id: user, team_id: TEAM },
    channel: { id: CHANNEL },
    response_url: 'https://hooks.slack.com/actions/T0TEST/1/click',
    actions: [{ type: 'button', action_id: 'retry_job', value }],
  };
  const spy = ackSpy(w);
  await tryAgain(w.deps)(boltActionArgs<Args>(body, spy.ack));
  await w.idle();
  return spy;
}

describe('"Try again"', () => {
  it('is acknowledged once the retry is recorded, and starts it', async () => {
    const job = await failedJob();
    const { ack, jobsAtAck } = await click(String(job.id));
    expect(ack).toHaveBeenCalledOnce();
    expect(jobsAtAck).toEqual([2]);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect(w.slack.respond).not.toHaveBeenCalled();
  });

  it('with no background slot free, leaves the recorded retry to the take-over round, unstarted', async () => {
    const job = await failedJob();
    // The next piece of background work (the start) is turned away.
    vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);
    const { ack, jobsAtAck } = await click(String(job.id));
    expect(ack).toHaveBeenCalledOnce();
    expect(jobsAtAck).toEqual([2]);
    const ownerOf = (id: number) =>
      (w.store.db.prepare('SELECT owner FROM jobs WHERE id = ?').get(id) as { owner: string | null }).owner;
    await vi.waitFor(() => expect(ownerOf(2)).toBeNull());
    expect(w.agent.createJob).not.toHaveBeenCalled();
  });

  it('refuses, privately, someone who may not instruct the agent, and records nothing', async () => {
    const job = await failedJob();
    const { ack } = await click(String(job.id), 'U0MALLORY');
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.respond).toHaveBeenCalledWith(
      'https://hooks.slack.com/actions/T0TEST/1/click',
      expect.stringContaining('not on the list of people'),
    );
    expect(w.jobCount()).toBe(1);
  });

  it('acknowledges a click it cannot read, and a value that names no job, starting nothing', async () => {
    const { ack } = await click('not-a-job-id');
    expect(ack).toHaveBeenCalledOnce();
    await click('12345');
    expect(w.slack.respond).toHaveBeenCalledWith(
      expect.any(String),
      expect.stringContaining('cannot be tried again'),
    );
    expect(w.jobCount()).toBe(0);
  });

  it('acknowledges a click whose person is not a user id, and answers or records nothing', async () => {
    const job = await failedJob();
    const { ack } = await click(String(job.id), '<!here>');
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.respond).not.toHaveBeenCalled();
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    expect(w.jobCount()).toBe(1);
    expect(w.logged('warn', 'click not understood')[0]).toContain('user.id');
  });
});

describe('tryAgainText', () => {
  it('says a job that cannot be tried again started nothing, mentioning nobody', () => {
    const said = tryAgainText.notRetryable();
    expect(said).toContain('This job cannot be tried again');
    expect(said).toContain('Nothing was started.');
    expect(said).not.toMatch(/<[@!#]/);
  });
});
