import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { docsAgentCommand } from '../../../src/features/command/listener.js';
import { TEAM } from '../../helpers/fake-network.js';
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
