import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AgentStandIn, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { account, type Instruction } from './ledger.js';

/** The fault suite's ledger: an instruction is told only by a notice about it that says what happened. */
describe('fault ledger', () => {
  let slack: SlackStandIn;
  let agent: AgentStandIn;
  beforeEach(async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
  });
  afterEach(async () => {
    await slack.close();
    await agent.close();
  });

  const command = (prompt: string, responseId: string): Instruction => ({
    prompt,
    kind: 'command',
    user: 'U0ALICE',
    acked: true,
    responseId,
  });
  const reply = (prompt: string, messageTs: string): Instruction => ({
    prompt,
    kind: 'reply',
    user: 'U0BOB',
    acked: true,
    threadTs: '100.000001',
    messageTs,
  });
  /** The status card of `prompt`, at ts 100.000001. */
  const card = (prompt: string) =>
    slack.messages.push({
      channel: 'C0GENERAL',
      ts: '100.000001',
      text: `Working on ${prompt}`,
      metadata: { event_type: 'docs_agent_root', event_payload: {} },
      bot_id: 'B0BOT',
      user: 'U0BOT',
    });
  const notice = (run: number, text: string) =>
    slack.messages.push({
      channel: 'C0GENERAL',
      ts: `100.00000${run + 1}`,
      thread_ts: '100.000001',
      text,
      metadata: { event_type: 'docs_agent_post', event_payload: { kind: 'notice', run, source: null } },
      bot_id: 'B0BOT',
      user: 'U0BOT',
    });
  const created = (prompt: string) =>
    agent.jobs.set('job_1', {
      id: 'job_1',
      status: 'active',
      source: { repository: 'https://github.com/example/docs', ref: null },
      model: 'sonnet',
      prLink: null,
      projectId: 'proj',
      createdAt: '2026-01-01T00:00:00Z',
      archivedAt: null,
      prompts: [prompt],
    });
  const ephemeral = (text: string) =>
    slack.calls.push({
      method: 'chat.postEphemeral',
      args: { channel: 'C0GENERAL', user: 'U0BOB', thread_ts: '100.000001', text },
      at: 0,
    });

  it('a notice at another command’s response_url tells nobody', () => {
    slack.responses.push({ path: '/respond/r2', body: { text: 'No job was started.' } });
    const details: string[] = [];
    const counts = account([command('Document A', 'r1')], slack, agent, details);
    expect(counts).toMatchObject({ told: 0, lost: 1 });
    expect(details).toHaveLength(1);
  });

  it('a job created upstream is told only by a notice about its run that says the bot cannot tell', () => {
    card('Document A');
    created('Document A');
    notice(2, ':grey_question: I cannot tell whether the agent received your reply.');
    expect(account([command('Document A', 'r1')], slack, agent, [])).toMatchObject({ told: 0, lost: 1 });
    notice(1, ':grey_question: I restarted and cannot tell whether the docs agent received it.');
    expect(account([command('Document A', 'r1')], slack, agent, [])).toMatchObject({
      told: 1,
      toldReached: 1,
      lost: 0,
    });
  });

  it('telling "not started" of a job the agent got is lost, not told', () => {
    card('Document A');
    created('Document A');
    notice(1, ':warning: Something went wrong on my side. No job was started.');
    const details: string[] = [];
    expect(account([command('Document A', 'r1')], slack, agent, details)).toMatchObject({ told: 0, lost: 1 });
    expect(details[0]).toContain('reached the agent');
  });

  it('one private note tells one reply, and only one that says it was not sent', () => {
    card('Document A');
    ephemeral(':hourglass: Slack could not confirm who you are, so it has not been sent yet.');
    const replies = [reply('More detail', '100.000010'), reply('And more', '100.000011')];
    expect(account(replies, slack, agent, [])).toMatchObject({ told: 0, lost: 2 });
    ephemeral(':information_source: This thread has no running agent job, so your reply was not sent.');
    expect(account(replies, slack, agent, [])).toMatchObject({ told: 1, lost: 1 });
  });
});
