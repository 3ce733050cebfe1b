import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { text } from '../../../src/blocks/messages.js';
import { acceptInstruction } from '../../../src/features/command/instruction.js';
import type { Command } from '../../../src/features/command/payload.js';
import { commandText } from '../../../src/features/command/wording.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { ackSpy, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

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
