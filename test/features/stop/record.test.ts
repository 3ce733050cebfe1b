import { afterEach, describe, expect, it } from 'vitest';
import {
  recordStop,
  type StopOutcome,
  type StopRequest,
  stopText,
  type Withdrawn,
} from '../../../src/features/stop/record.js';
import type { JobService } from '../../../src/jobs/job-service.js';
import type { NewJob } from '../../../src/store/types.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../../helpers/job-world.js';

const THREAD = '1700000000.000001';

let w: JobWorld;
let stop: (request: StopRequest) => Promise<StopOutcome>;
let jobs: JobService;
afterEach(async () => {
  jobs.stop();
  await w.store.close();
});

function setUp(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  // The job kernel's withdrawal (shared with deletions) and outbox writes, as the app hands them.
  jobs = w.service();
  stop = (request) => recordStop({ ...w.ctx, jobs, outbox: w.ctx }, request);
}

const press = (fields: Partial<StopRequest> = {}): StopRequest => ({
  channelId: CHANNEL,
  threadTs: THREAD,
  userId: REQUESTER,
  teamId: TEAM,
  eventTs: '1700000400.000400',
  ...fields,
});

/** An active job with a follow-up still in its batch window or checks (`pending`). */
async function activeWithWaitingReply(fields: Partial<NewJob> = {}) {
  const { job } = await w.activeJob(fields);
  return { job, reply: await w.insertFollowUp(job.id, { messageTs: '1700000300.000300' }) };
}

const stoppedPosts = () => w.outbox().filter((r) => r.key?.startsWith('stopped:'));

describe('recordStop', () => {
  it('withdraws what has not reached the agent, says so in the thread, and marks the run the agent has', async () => {
    setUp();
    const { job, reply } = await activeWithWaitingReply();
    expect(await stop(press())).toBe('stopped');

    expect(await w.store.getRun(reply.id)).toMatchObject({ state: 'failed', error: 'withdrawn' });
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
    const [post, ...more] = stoppedPosts();
    expect(more).toEqual([]);
    expect(post?.key).toBe(`stopped:${job.runCount}:${reply.id}:${job.id}`);
    const text = JSON.stringify(post?.payload);
    expect(text).toContain('Withdrawn before it reached the docs agent');
    expect(text).toContain('it will finish, and its outcome will still be posted');
    expect(w.deps.loops.outbox.kick).toHaveBeenCalled();
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
  });

  it('acts once on a stop delivered twice', async () => {
    setUp();
    await activeWithWaitingReply();
    expect(await stop(press())).toBe('stopped');
    const queued = w.outbox().length;
    expect(await stop(press())).toBe('repeat');
    expect(await stop(press({ eventTs: '1700000401.000401' }))).toBe('repeat');
    expect(w.outbox()).toHaveLength(queued);
  });

  it('stops again when something new waits after the first stop', async () => {
    setUp();
    const { job } = await activeWithWaitingReply();
    await stop(press());
    const later = await w.insertFollowUp(job.id, { prompt: 'And the CLI', authorId: REQUESTER });
    expect(await stop(press({ eventTs: '1700000600.000600' }))).toBe('stopped');
    expect((await w.store.getRun(later.id))?.state).toBe('failed');
    expect(stoppedPosts()).toHaveLength(2);
  });

  it('with nothing waiting, marks the running run once and says nothing was waiting', async () => {
    setUp();
    const { job } = await w.activeJob();
    expect(await stop(press())).toBe('stopped');
    expect(JSON.stringify(stoppedPosts()[0]?.payload)).toContain('Nothing was waiting to be withdrawn');
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
    expect(await stop(press())).toBe('repeat');
  });

  it.each(['active', 'idle'] as const)(
    'with a reply on its way to the agent (%s job): stops the run that reply starts too',
    async (phase) => {
      setUp();
      const { job, reply } = await activeWithWaitingReply();
      await w.store.apply(
        { jobId: job.id, job: { phase }, run: { id: reply.id, patch: { state: 'sending' } } },
        w.clock.at,
      );
      expect(await stop(press())).toBe('stopped');
      expect((await w.job(job.id)).stoppedRun).toBe(job.runCount + 1);
      expect((await w.store.getRun(reply.id))?.state).toBe('sending');
      expect(stoppedPosts()[0]?.key).toBe(`stopped:${job.runCount + 1}:0:${job.id}`);
      // Pressed again while it is still on its way: nothing more to do.
      expect(await stop(press({ eventTs: '1700000401.000401' }))).toBe('repeat');
    },
  );

  it('has nothing to stop on a job the agent has finished with and nothing waiting', async () => {
    setUp();
    const { job } = await w.activeJob();
    await w.store.apply({ jobId: job.id, job: { phase: 'idle' } }, w.clock.at);
    expect(await stop(press())).toBe('repeat');
    expect(stoppedPosts()).toEqual([]);
  });

  it('withdraws a job whose first instruction has not been sent: it never starts', async () => {
    setUp();
    const { job, run } = await w.insertJob({ origin: 'mention', threadTs: THREAD });
    expect(await stop(press())).toBe('stopped');
    expect(await w.job(job.id)).toMatchObject({ phase: 'not_started', lastError: 'withdrawn' });
    expect((await w.store.getRun(run.id))?.state).toBe('failed');
    expect(JSON.stringify(stoppedPosts()[0]?.payload)).toContain('Nothing else was running');
    expect(w.agent.createJob).not.toHaveBeenCalled();
  });

  it('lets someone who may instruct the agent there stop another person’s job', async () => {
    setUp();
    const { reply } = await activeWithWaitingReply();
    expect(await stop(press({ userId: 'U0COLLEAGUE' }))).toBe('stopped');
    expect((await w.store.getRun(reply.id))?.state).toBe('failed');
  });

  it('refuses anyone else, tells them privately, withdraws nothing, and shows the session as it was', async () => {
    setUp({ ALLOWED_USER_IDS: `${REQUESTER},U0HELPER` });
    const { job, reply } = await activeWithWaitingReply();
    expect(await stop(press({ userId: 'U0STRANGER' }))).toBe('refused');

    expect((await w.store.getRun(reply.id))?.state).toBe('pending');
    expect((await w.job(job.id)).stoppedRun).toBeNull();
    expect(stoppedPosts()).toEqual([]);
    const note = w.outbox().find((r) => r.key === `stop-refused:1700000400.000400:${job.id}`);
    expect(note?.payload).toMatchObject({
      type: 'ephemeral',
      channel: CHANNEL,
      user: 'U0STRANGER',
      threadTs: THREAD,
    });
    expect(JSON.stringify(note?.payload)).toContain(`<@${REQUESTER}>`);
    expect(w.outbox().some((r) => r.key === null)).toBe(true);
  });

  it('the requester may always stop their own job, even where they are not listed', async () => {
    setUp({ ALLOWED_USER_IDS: 'U0SOMEONE' });
    await activeWithWaitingReply();
    expect(await stop(press())).toBe('stopped');
  });

  it('ignores a stop whose person is not a user id: nothing is addressed to it or written with it', async () => {
    setUp({ ALLOWED_USER_IDS: REQUESTER });
    const { job, reply } = await activeWithWaitingReply();
    expect(await stop(press({ userId: '<!channel>' }))).toBe('ignored');
    expect(await w.store.getRun(reply.id)).toMatchObject({ state: 'pending' });
    expect((await w.job(job.id)).stoppedRun).toBeNull();
    expect(w.outbox()).toEqual([]);
    expect(w.logs.find((l) => l.includes('stop ignored: not a user id'))).toContain('"field":"userId"');
    expect(w.logs.join('\n')).not.toContain('<!channel>');
  });

  it('ignores a stop in a thread with no job', async () => {
    setUp();
    expect(await stop(press({ threadTs: '1700000999.000999' }))).toBe('ignored');
    expect(w.outbox()).toEqual([]);
  });
});

describe('StopRequest', () => {
  it('eventTs: a re-delivered refused stop tells the person once; another press tells them again', async () => {
    setUp({ ALLOWED_USER_IDS: REQUESTER });
    const { job } = await w.activeJob();
    const threadTs = job.threadTs ?? '';
    for (const eventTs of ['1.000001', '1.000001', '2.000002'])
      expect(await stop(press({ threadTs, userId: 'U0STRANGER', eventTs }))).toBe('refused');
    expect(w.outboxKeys().filter((k) => k.startsWith('stop-refused:'))).toEqual([
      `stop-refused:1.000001:${job.id}`,
      `stop-refused:2.000002:${job.id}`,
    ]);
  });
});

const reply = (authorId: string): Withdrawn => ({ kind: 'follow_up', authorId });

describe('stopText.stopped', () => {
  it('names who pressed stop, and never claims to have stopped a running agent', () => {
    expect(stopText.stopped({ by: 'U0ALICE', withdrawn: [], running: true })).toBe(
      ':octagonal_sign: <@U0ALICE> pressed stop. Nothing was waiting to be withdrawn. The agent already has the instruction it is working on and cannot be interrupted: it will finish, and its outcome will still be posted in this thread.',
    );
    expect(stopText.stopped({ by: 'U0ALICE', withdrawn: [], running: false })).toBe(
      ':octagonal_sign: <@U0ALICE> pressed stop. Nothing was waiting to be withdrawn. Nothing else was running.',
    );
  });

  it('lists what was withdrawn: the first instruction, and replies by their authors', () => {
    const said = stopText.stopped({
      by: 'U0ALICE',
      withdrawn: [{ kind: 'create', authorId: 'U0ALICE' }, reply('U0BOB')],
      running: false,
    });
    expect(said).toContain(
      'Withdrawn before it reached the docs agent: the first instruction, a reply from <@U0BOB>.',
    );
  });

  it('names five and counts the rest', () => {
    const withdrawn = Array.from({ length: 7 }, (_, i) => reply(`U0P${i}`));
    const said = stopText.stopped({ by: 'U0ALICE', withdrawn, running: true });
    expect(said).toContain('a reply from <@U0P4>, 2 more.');
    expect(said).not.toContain('U0P5');
    expect(said).toContain('cannot be interrupted');
  });

  it('mentions nobody through an id that is not a person’s', () => {
    const said = stopText.stopped({
      by: '<!channel>',
      withdrawn: [reply('<!here>'), reply('S0TEAM')],
      running: false,
    });
    expect(said).toContain('&lt;!channel&gt; pressed stop');
    expect(said).toContain('a reply from &lt;!here&gt;, a reply from S0TEAM.');
    expect(said).not.toMatch(/<[!@]/);
  });
});

describe('stopText', () => {
  it('tells whoever may not stop the job who may, and that nothing was stopped', () => {
    expect(stopText.notYours('U0ALICE')).toBe(
      ':no_entry: Only <@U0ALICE>, who asked for this job, or someone who may instruct the docs agent here can stop it. Nothing was stopped.',
    );
    expect(stopText.notYours('<!everyone>')).not.toContain('<!everyone>');
  });

  it('says a stop that was not recorded may not hold', () => {
    expect(stopText.notRecorded()).toContain('what waits may still be sent to the docs agent');
  });
});
