import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { text } from '../../../src/blocks/messages.js';
import { refusalText } from '../../../src/blocks/refusal-texts.js';
import {
  acceptInstruction,
  answerReport,
  type Command,
  docsAgentCommand,
  type ReportDeps,
} from '../../../src/features/command/listener.js';
import { parseCommandText } from '../../../src/features/command/subcommands.js';
import { commandText } from '../../../src/features/command/wording.js';
import { TEAM, WORKSPACE_URL } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { ackSpy, boltExtras, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof docsAgentCommand>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for `/docs-agent <text>`; returns its `ack` spy. */
async function send(fields: Record<string, unknown> = {}) {
  const spy = ackSpy(w);
  const command = {
    command: '/docs-agent',
    text: 'Document the rate limits',
    user_id: REQUESTER,
    channel_id: CHANNEL,
    channel_name: 'docs',
    team_id: TEAM,
    team_domain: 'example-test',
    trigger_id: 'trigger-test-1',
    response_url: 'https://hooks.slack.com/commands/T0TEST/1/test',
    ...fields,
  };
  const respond = vi.fn();
  await docsAgentCommand(w.deps)({
    command,
    body: command,
    ack: spy.ack,
    respond,
    say: vi.fn(),
    ...boltExtras(),
  } as unknown as Args);
  expect(respond).not.toHaveBeenCalled();
  return spy;
}
/** The text of the one answer `ack` was given. */
const answerOf = (ack: ReturnType<typeof ackSpy>['ack']) => {
  expect(ack).toHaveBeenCalledOnce();
  return JSON.stringify(ack.mock.calls[0]?.[0] ?? null);
};

describe('/docs-agent <instruction>', () => {
  it('records the job before acknowledging, then starts it in the background', async () => {
    const { ack, jobsAtAck } = await send();
    expect(ack).toHaveBeenCalledWith();
    expect(jobsAtAck).toEqual([1]);
    await w.idle();
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the rate limits');
    const [job] = await w.store.recentJobs({ requesterId: REQUESTER }, 5);
    expect(job).toMatchObject({ phase: 'active', triggerKey: 'command:trigger-test-1', origin: 'command' });
  });

  it('a repeated command (same trigger) is acknowledged and starts nothing more', async () => {
    await send();
    await w.idle();
    const { ack } = await send();
    expect(ack).toHaveBeenCalledWith();
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it('an instruction that is too long is recorded, then refused privately, never sent', async () => {
    await w.stop();
    w = createListenerWorld({ MAX_PROMPT_CHARS: '100' });
    const { ack } = await send({ text: 'z'.repeat(101) });
    expect(ack).toHaveBeenCalledWith();
    await w.idle();
    expect(w.agent.createJob).not.toHaveBeenCalled();
    const [note] = w.outbox();
    expect(note?.payload).toMatchObject({ type: 'respond' });
    expect(JSON.stringify(note?.payload)).toContain('101 characters');
  });

  it('refuses a direct message at once, recording nothing', async () => {
    const { ack } = await send({ channel_id: 'D0DIRECT', channel_name: 'directmessage' });
    expect(answerOf(ack)).toContain('runs jobs in channels');
    expect(answerOf(ack)).toContain('as a message in my Messages tab');
    expect(ack.mock.calls[0]?.[0]).toMatchObject({ response_type: 'ephemeral' });
    expect(w.jobCount()).toBe(0);
  });

  it('says so when the store cannot record it, and starts nothing', async () => {
    vi.spyOn(w.deps.jobs, 'recordJob').mockRejectedValueOnce(new Error('disk I/O error'));
    const { ack } = await send();
    expect(answerOf(ack)).toContain('could not record that instruction');
    expect(w.logged('error', 'could not record a command')).toHaveLength(1);
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('with no background slot free, leaves the recorded job to the store instead of dropping it', async () => {
    vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);
    const handBack = vi.spyOn(w.deps.jobs, 'handBack');
    const { ack } = await send();
    expect(ack).toHaveBeenCalledWith();
    const [job] = await w.store.recentJobs({ requesterId: REQUESTER }, 5);
    expect(handBack).toHaveBeenCalledWith({ jobIds: [job?.id] });
    await handBack.mock.results[0]?.value;
    expect((await w.job(job?.id ?? -1)).owner).toBeNull();
  });
});

describe('/docs-agent with no instruction', () => {
  it.each(['', '   ', 'help'])('answers %j with the usage, privately, recording nothing', async (text) => {
    const { ack } = await send({ text });
    expect(answerOf(ack)).toContain('/docs-agent');
    expect(ack.mock.calls[0]?.[0]).toMatchObject({ response_type: 'ephemeral' });
    expect(w.jobCount()).toBe(0);
  });

  it('names an unknown subcommand and starts nothing', async () => {
    const { ack } = await send({ text: 'cancel' });
    expect(answerOf(ack)).toContain('is not a /docs-agent subcommand');
    expect(w.jobCount()).toBe(0);
  });

  it('answers a payload it cannot read, and logs what was missing', async () => {
    const { ack } = await send({ user_id: undefined, trigger_id: '' });
    expect(answerOf(ack)).toContain('could not read that command');
    const [line] = w.logged('warn', 'slash command payload not understood');
    expect(line).toContain('user_id');
    expect(line).toContain('trigger_id');
    expect(w.jobCount()).toBe(0);
  });

  it('reads a person it cannot name as a payload it cannot read: nothing recorded, no one addressed', async () => {
    const { ack } = await send({ user_id: 'U0ALICE|<!channel>' });
    expect(answerOf(ack)).toContain('could not read that command');
    expect(w.jobCount()).toBe(0);
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    const [line] = w.logged('warn', 'slash command payload not understood');
    expect(line).toContain('user_id');
    expect(line).not.toContain('<!channel>');
  });
});

describe('/docs-agent list and status', () => {
  it('lists the person’s jobs, linked to their threads', async () => {
    await send();
    await w.idle();
    const { ack } = await send({ text: 'list' });
    const answer = answerOf(ack);
    expect(answer).toContain('Document the rate limits');
    expect(answer).toContain('example-test.slack.com');
  });

  it('refuses reports to someone who may not use the bot', async () => {
    await w.stop();
    w = createListenerWorld({ ALLOWED_USER_IDS: 'U0SOMEONEELSE' });
    const { ack } = await send({ text: 'status' });
    expect(ack.mock.calls[0]?.[0]).toMatchObject({ response_type: 'ephemeral' });
    const answer = answerOf(ack);
    expect(answer).toContain('not on the list of people');
    expect(answer).not.toContain('proj_test');
  });

  it('reports the projects and what was used this hour', async () => {
    const { ack } = await send({ text: 'status' });
    expect(answerOf(ack)).toContain('proj_test');
  });

  it('says the records cannot be read when the store fails, instead of no answer', async () => {
    vi.spyOn(w.store, 'recentJobs').mockRejectedValueOnce(new Error('disk I/O error'));
    const { ack } = await send({ text: 'list channel' });
    expect(answerOf(ack)).toContain('could not read my records');
    expect(w.logged('error', 'could not read the store for a report')).toHaveLength(1);
  });
});

describe('an instruction', () => {
  let w: ListenerWorld;
  beforeEach(() => {
    w = createListenerWorld();
  });
  afterEach(() => w.stop());

  let triggers = 0;
  /** `/docs-agent <instruction>` as the command's listener read it; returns its `ack` spy. */
  async function instruct(fields: Partial<Command> = {}, instruction = 'Document the rate limits') {
    const spy = ackSpy(w);
    const command: Command = {
      text: instruction,
      user_id: REQUESTER,
      channel_id: CHANNEL,
      channel_name: 'docs',
      team_id: TEAM,
      trigger_id: `trigger-instruction-${++triggers}`,
      response_url: 'https://hooks.slack.com/commands/T0TEST/1/test',
      ...fields,
    };
    await acceptInstruction(w.deps, command, instruction, spy.ack as never);
    return spy;
  }

  describe('acceptInstruction', () => {
    it('records the job, then acknowledges with no words, then starts it in the background', async () => {
      const accept = vi.spyOn(w.deps.jobs, 'recordJob');
      const { ack, jobsAtAck } = await instruct();
      expect(ack).toHaveBeenCalledWith();
      expect(jobsAtAck).toEqual([1]);
      expect(accept).toHaveBeenCalledWith(
        {
          teamId: TEAM,
          channelId: CHANNEL,
          requesterId: REQUESTER,
          instruction: 'Document the rate limits',
          triggerKey: 'command:trigger-instruction-1',
          responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/test',
          // The command did not say who can read the channel: Slack is asked as the job starts.
          privacy: 'unknown',
        },
        'Document the rate limits',
        null,
      );
      await w.idle();
      expect(w.agent.createJob).toHaveBeenCalledWith('Document the rate limits');
    });

    it('an Enterprise Grid member’s command is recorded for their organisation', async () => {
      await instruct({ user_id: 'W0GRIDUSER', team_id: 'E0GRID' });
      const [job] = await w.store.recentJobs({ requesterId: 'W0GRIDUSER' }, 5);
      expect(job).toMatchObject({ teamId: 'E0GRID', channelId: CHANNEL });
    });

    it('in a private channel (Slack names it `privategroup`): the job is recorded as private', async () => {
      await instruct({ channel_id: 'C0SECRET', channel_name: 'privategroup' });
      const [job] = await w.store.recentJobs({ requesterId: REQUESTER }, 5);
      expect(job?.privacy).toBe('private');
    });

    it('without a response_url: recorded with none', async () => {
      const accept = vi.spyOn(w.deps.jobs, 'recordJob');
      await instruct({ response_url: undefined });
      expect(accept.mock.calls[0]?.[0].responseUrl).toBeNull();
    });

    it.each([
      ['a direct message', { channel_id: 'D0DIRECT', channel_name: 'directmessage' }],
      [
        'a group direct message (its id looks like a private channel’s)',
        { channel_id: 'G0GROUP', channel_name: 'mpdm' },
      ],
      ['a D… conversation Slack did not name', { channel_id: 'D0DIRECT', channel_name: undefined }],
    ])('in %s: refused at once, privately, recording nothing', async (_what, fields) => {
      const { ack } = await instruct(fields);
      expect(ack).toHaveBeenCalledWith({ response_type: 'ephemeral', text: commandText.directMessage() });
      expect(w.jobCount()).toBe(0);
      expect(w.deps.tasks.run).not.toHaveBeenCalled();
    });

    it('a repeat of a recorded command is acknowledged and starts nothing', async () => {
      await instruct({ trigger_id: 'trigger-same' });
      await w.idle();
      const { ack } = await instruct({ trigger_id: 'trigger-same' });
      expect(ack).toHaveBeenCalledWith();
      expect(w.deps.tasks.run).toHaveBeenCalledOnce();
    });

    it('when the store cannot record it: says so privately, and starts nothing', async () => {
      vi.spyOn(w.deps.jobs, 'recordJob').mockRejectedValueOnce(new Error('disk I/O error'));
      const { ack } = await instruct();
      expect(ack).toHaveBeenCalledWith({ response_type: 'ephemeral', text: text.notRecorded() });
      expect(w.logged('error', 'could not record a command')).toHaveLength(1);
      expect(w.deps.tasks.run).not.toHaveBeenCalled();
    });
  });
});

describe('a subcommand', () => {
  const FAKE_KEY = 'mint_test-not-a-real-key-0001';
  let w: ListenerWorld;
  beforeEach(() => {
    w = createListenerWorld({ DOCS_AGENT_API_KEY: FAKE_KEY });
  });
  afterEach(() => {
    vi.useRealTimers();
    return w.stop();
  });

  /** `/docs-agent <words>` (a subcommand) from `user` in `channel`; the one answer it was given. */
  async function report(words: string, fields: Partial<Command> = {}, deps: ReportDeps = w.deps) {
    const asked = parseCommandText(words);
    if (asked.kind !== 'subcommand') throw new Error(`${words} is not a subcommand`);
    const { ack } = ackSpy(w);
    const command: Command = {
      text: words,
      user_id: REQUESTER,
      channel_id: CHANNEL,
      team_id: TEAM,
      team_domain: 'from-the-command',
      trigger_id: 'trigger-report',
      ...fields,
    };
    await answerReport(deps, command, asked, ack as never);
    expect(ack).toHaveBeenCalledOnce();
    const answer = ack.mock.calls[0]?.[0] as { response_type: string; text: string; blocks?: unknown[] };
    expect(answer.response_type).toBe('ephemeral');
    return { answer, json: JSON.stringify(answer) };
  }

  const mine = 'list';
  const channel = 'list channel';
  const status = 'status';

  describe('/docs-agent list', () => {
    beforeEach(async () => {
      await w.insertJob({}, 'Document the rate limits');
      await w.insertJob({ requesterId: 'U0BOB' }, 'Fix the quickstart');
      await w.insertJob({ channelId: 'C0OTHER' }, 'Add an FAQ entry');
    });

    it('lists the person’s own jobs, wherever they were asked', async () => {
      const { json } = await report(mine);
      expect(json).toContain('Document the rate limits');
      expect(json).toContain('Add an FAQ entry');
      expect(json).not.toContain('Fix the quickstart');
    });

    it('`list channel`: the channel’s jobs, whoever asked', async () => {
      const { json } = await report(channel);
      expect(json).toContain('Document the rate limits');
      expect(json).toContain('Fix the quickstart');
      expect(json).not.toContain('Add an FAQ entry');
    });

    it('links to the workspace Slack named, or to the command’s team domain before it has', async () => {
      await w.activeJob();
      expect((await report(mine)).json).toContain('https://from-the-command.slack.com/');
      await w.identity.get();
      const { json } = await report(mine);
      expect(json).toContain(WORKSPACE_URL);
      expect(json).not.toContain('from-the-command');
    });

    it('masks a secret that reached a job’s words', async () => {
      await w.insertJob({}, `Rotate the key ${FAKE_KEY} in the docs`);
      const { json } = await report(mine);
      expect(json).toContain('Rotate the key');
      expect(json).not.toContain(FAKE_KEY);
    });
  });

  describe('/docs-agent status', () => {
    it('quotes what thumbs-down said to fix only where the job’s words may be read', async () => {
      const said = async (fields: Parameters<ListenerWorld['insertJob']>[0], reason: string) => {
        const { job } = await w.insertJob(fields);
        await w.store.recordFeedbackReason(
          { jobId: job.id, runSeq: 1, userId: 'U0VOTER', reason },
          w.clock.at,
        );
      };
      await said({ privacy: 'public', channelId: 'C0PUBLIC', requesterId: 'U0BOB' }, 'Public words');
      await said({ privacy: 'private', channelId: 'G0SECRET', requesterId: 'U0BOB' }, 'Secret words');
      await said({ privacy: 'pane', channelId: 'D0ALICE', requesterId: REQUESTER }, 'Own pane words');
      // Elsewhere, someone else's private job is counted but not quoted.
      const elsewhere = (await report(status, { channel_id: 'C0ELSEWHERE', user_id: 'U0CAROL' })).answer.text;
      expect(elsewhere).toContain('Public words');
      expect(elsewhere).not.toContain('Secret words');
      expect(elsewhere).not.toContain('Own pane words');
      expect(elsewhere).toContain('2 more on jobs asked for where you cannot see them');
      // In the private channel itself, its words are shown; the requester sees their own pane's.
      const inside = (await report(status, { channel_id: 'G0SECRET', user_id: 'U0CAROL' })).answer.text;
      expect(inside).toContain('Secret words');
      expect(inside).not.toContain('Own pane words');
      const own = (await report(status, { channel_id: 'C0ELSEWHERE', user_id: REQUESTER })).answer.text;
      expect(own).toContain('Own pane words');
      expect(own).not.toContain('Secret words');
    });

    it('reports the projects served, and one instance on a store of its own', async () => {
      const live = vi.spyOn(w.store, 'liveInstances');
      const { answer } = await report(status);
      expect(answer.text).toContain(w.config.agent.projectId);
      expect(live).not.toHaveBeenCalled();
    });

    it('on a shared store, counts the live instances (at least this one)', async () => {
      const deps = (instances: number) =>
        ({
          ...w.deps,
          store: { ...w.store, shared: true, liveInstances: async () => instances },
        }) as ReportDeps;
      expect((await report(status, {}, deps(3))).json).toContain('*Instances*\\n3');
      expect((await report(status, {}, deps(0))).json).toContain('*Instances*\\n1');
    });

    it('says the records cannot be read when the store fails', async () => {
      vi.spyOn(w.store, 'countActiveJobs').mockRejectedValueOnce(new Error('disk I/O error'));
      const { answer } = await report(status);
      expect(answer).toEqual({ response_type: 'ephemeral', text: commandText.reportUnavailable() });
      expect(
        JSON.parse(w.logged('error', 'could not read the store for a report')[0] as string),
      ).toMatchObject({
        kind: 'status',
      });
    });
  });

  describe('who gets a report', () => {
    it('someone who may not use the bot is refused, and shown nothing of the store', async () => {
      await w.stop();
      w = createListenerWorld({ ALLOWED_USER_IDS: 'U0SOMEONEELSE' });
      const recent = vi.spyOn(w.store, 'recentJobs');
      const { json } = await report(mine);
      expect(json).toContain('not on the list of people');
      expect(recent).not.toHaveBeenCalled();
    });

    it('when the access check fails: refused as unverified (fail closed)', async () => {
      const deps = {
        ...w.deps,
        access: { check: async () => Promise.reject(new Error('users.info failed')) },
      };
      const { answer } = await report(status, {}, deps);
      expect(answer).toEqual({ response_type: 'ephemeral', text: refusalText({ reason: 'unverified' }) });
    });

    it('when the access check does not answer within 1.5 s: refused as unverified, within Slack’s 3 s', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const deps = { ...w.deps, access: { check: () => new Promise<never>(() => {}) } };
      let done = false;
      const answered = report(status, {}, deps).finally(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(1_499);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const { answer } = await answered;
      expect(answer).toEqual({ response_type: 'ephemeral', text: refusalText({ reason: 'unverified' }) });
    });
  });
});
