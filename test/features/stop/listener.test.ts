import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { agentSessionStopped } from '../../../src/features/stop/listener.js';
import { stopText } from '../../../src/features/stop/record.js';
import type { JobRecord } from '../../../src/store/types.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof agentSessionStopped>>[0];

let w: ListenerWorld;
let job: JobRecord;
beforeEach(async () => {
  w = createListenerWorld({ ALLOWED_USER_IDS: `${REQUESTER},W0GRIDADMIN` });
  job = (await w.activeJob()).job;
});
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for `agent_session_stopped`, as Slack documents it. */
function pressStop(fields: Record<string, unknown> = {}, context: Record<string, unknown> = {}) {
  const event = {
    type: 'agent_session_stopped',
    channel: CHANNEL,
    user: REQUESTER,
    thread_ts: job.threadTs,
    streaming_message_ts: [],
    event_ts: '1783536983.000100',
    ...fields,
  };
  return agentSessionStopped(w.deps)(boltEventArgs<Args>(event, context));
}

const stopPosts = () =>
  w.outbox().filter((r) => JSON.stringify(r.payload).includes('pressed stop') && r.jobId === job.id);

describe('agent_session_stopped', () => {
  it('the requester’s stop is recorded before Slack is answered: the run is marked, the thread told', async () => {
    await pressStop();
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
    expect(stopPosts()).toHaveLength(1);
    expect(JSON.parse(w.logs.find((l) => l.includes('stop pressed')) as string)).toMatchObject({
      outcome: 'stopped',
      channel: CHANNEL,
    });
  });

  it('a stop delivered again does nothing more', async () => {
    await pressStop();
    await pressStop();
    expect(stopPosts()).toHaveLength(1);
  });

  it('an Enterprise Grid member (a W… id) who may instruct the agent here may stop someone’s job', async () => {
    await pressStop({ user: 'W0GRIDADMIN' });
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
  });

  it('someone else is refused privately, and the job goes on', async () => {
    await pressStop({ user: 'U0MALLORY' });
    await w.idle();
    expect((await w.job(job.id)).stoppedRun).toBeNull();
    expect(stopPosts()).toEqual([]);
    expect(JSON.stringify(w.outbox())).toContain('who asked for this job');
  });

  it('names the workspace from the envelope, or from Bolt’s context when the envelope’s is not a string', async () => {
    // Someone else's stop is checked where the job was asked, in the workspace the event names.
    const check = vi.spyOn(w.deps.access, 'check');
    await pressStop({ user: 'W0GRIDADMIN' });
    const args = boltEventArgs<Args>(
      {
        type: 'agent_session_stopped',
        channel: CHANNEL,
        user: 'W0GRIDADMIN',
        thread_ts: job.threadTs,
        event_ts: '1.2',
      },
      { teamId: 'T0FROMCONTEXT' },
    );
    Object.assign(args.body, { team_id: null });
    await agentSessionStopped(w.deps)(args);
    expect(check.mock.calls.map((c) => c[0].teamId)).toEqual([TEAM, 'T0FROMCONTEXT']);
  });

  it('a stop in a thread with no job is ignored', async () => {
    await pressStop({ thread_ts: '1699999999.000009' });
    expect(w.outbox().filter((r) => r.jobId === job.id && r.key)).toEqual([]);
    expect(w.logs.find((l) => l.includes('stop pressed'))).toContain('"outcome":"ignored"');
  });

  it.each([
    ['without its thread', { thread_ts: undefined }, 'thread_ts'],
    ['whose user is not a string', { user: 42 }, 'user'],
    ['with an empty channel', { channel: '' }, 'channel'],
    ['without its event_ts', { event_ts: undefined }, 'event_ts'],
  ])('an event %s is logged naming the field, and changes nothing', async (_what, fields, field) => {
    const lookup = vi.spyOn(w.deps.store, 'findJobByThread');
    await expect(pressStop(fields)).resolves.toBeUndefined();
    expect(lookup).not.toHaveBeenCalled();
    const [line] = w.logged('warn', 'agent_session_stopped event not understood');
    expect(JSON.parse(line as string).fields).toEqual([field]);
  });

  it.each([
    ['Slack syntax', '<!channel>'],
    ['a name', 'mallory'],
    ['an app’s id', 'B0SOMEAPP'],
    ['an id with Slack syntax after it', 'U0MALLORY> <!here'],
  ])(
    'a user that is %s is logged by its field name only, and nothing is posted or recorded',
    async (_what, user) => {
      const lookup = vi.spyOn(w.deps.store, 'findJobByThread');
      // Even on Slack's last retry, when a failure would be told to the person privately.
      await pressStop({ user }, { retryNum: 3 });
      await w.idle();
      expect(lookup).not.toHaveBeenCalled();
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
      expect(w.outbox().filter((r) => r.jobId === job.id && r.key)).toEqual([]);
      const [line, ...more] = w.logged('warn', 'agent_session_stopped event not understood');
      expect(more).toEqual([]);
      expect(JSON.parse(line as string).fields).toEqual(['user']);
      expect(w.logs.join('\n')).not.toContain(user);
    },
  );

  describe('when the store cannot record it', () => {
    beforeEach(() => {
      vi.spyOn(w.deps.store, 'findJobByThread').mockRejectedValue(new Error('disk I/O error'));
    });

    it('over HTTP, fails the event so Slack delivers it again', async () => {
      await expect(pressStop()).rejects.toThrow('disk I/O error');
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    });

    it('on Slack’s last retry, tells the person privately to press stop again', async () => {
      await pressStop({}, { retryNum: 3 });
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledWith({
        channel: CHANNEL,
        user: REQUESTER,
        threadTs: job.threadTs,
        text: stopText.notRecorded(),
      });
    });
  });
});
