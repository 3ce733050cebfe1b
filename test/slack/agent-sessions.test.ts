import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import { createAgentSessions, SESSION_TITLE_MAX_CHARS } from '../../src/slack/agent-sessions.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { SlackCallError } from '../../src/slack/slack-errors.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

const SECRET = 'mint_not_a_real_key_0123456789';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

async function sessionsOnStandIn() {
  slack = await startSlackStandIn();
  const { client, logger } = appSlackClient(slack.apiUrl);
  const errors: [string, string][] = [];
  const sessions = createAgentSessions(
    createSlackCaller({
      client,
      logger,
      redact: createRedactor([SECRET]),
      onError: (method, code) => errors.push([method, code]),
    }),
  );
  return { slack, sessions, errors };
}

describe('a thread’s agent session', () => {
  it('is made by its first status, with its title and initiator, and only moves status after', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    const thread = { channel: 'C0DOCS', threadTs: '1700000000.000100' };
    await sessions.setStatus({
      ...thread,
      status: 'active',
      title: 'Document the CLI',
      initiator: 'U0ALICE',
    });
    await sessions.setStatus({ ...thread, status: 'processing', title: 'A later title', initiator: 'U0BOB' });
    await sessions.setStatus({ ...thread, status: 'closed' });
    expect(slack.sessionOf(thread.channel, thread.threadTs)).toEqual({
      ...thread,
      status: 'closed',
      title: 'Document the CLI',
      initiator: 'U0ALICE',
      history: ['active', 'processing', 'closed'],
    });
    expect(slack.callsTo('agents.sessions.setStatus')[0]?.args).toMatchObject({
      channel_id: 'C0DOCS',
      thread_ts: '1700000000.000100',
      status: 'active',
      title: 'Document the CLI',
      initiator_user_id: 'U0ALICE',
    });
  });

  it('sends no title or initiator when it has none (an empty title included)', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active', title: '' });
    const [call] = slack.callsTo('agents.sessions.setStatus');
    expect(call?.args).not.toHaveProperty('title');
    expect(call?.args).not.toHaveProperty('initiator_user_id');
  });

  it('masks secrets in the title, as everything the bot sends', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({
      channel: 'C0DOCS',
      threadTs: '1.1',
      status: 'active',
      title: `Rotate ${SECRET} in the guide`,
    });
    expect(slack.sessionOf('C0DOCS', '1.1')?.title).toBe('Rotate [redacted] in the guide');
    expect(JSON.stringify(slack.calls)).not.toContain(SECRET);
  });

  it('keeps sessions of different threads apart, Enterprise Grid initiators included', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({
      channel: 'C0DOCS',
      threadTs: '1.1',
      status: 'active',
      initiator: 'W0GRIDUSER',
    });
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '2.2', status: 'suspended' });
    expect(slack.sessionOf('C0DOCS', '1.1')).toMatchObject({ status: 'active', initiator: 'W0GRIDUSER' });
    expect(slack.sessionOf('C0DOCS', '2.2')).toMatchObject({ status: 'suspended', initiator: undefined });
  });

  it('throws Slack’s refusal typed, and reports it by method and code', async () => {
    const { slack, sessions, errors } = await sessionsOnStandIn();
    slack.fail('agents.sessions.setStatus', { error: 'not_in_channel' });
    const error = await sessions
      .setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackCallError);
    expect(error).toMatchObject({ code: 'not_in_channel', permanent: true });
    expect(errors).toEqual([['agents.sessions.setStatus', 'not_in_channel']]);
    expect(slack.sessions.size).toBe(0);
  });

  it('is refused whole when the title is over Slack’s limit: callers shorten it first', async () => {
    const { slack, sessions, errors } = await sessionsOnStandIn();
    const title = 'x'.repeat(SESSION_TITLE_MAX_CHARS);
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active', title });
    await expect(
      sessions.setStatus({ channel: 'C0DOCS', threadTs: '2.2', status: 'active', title: `${title}y` }),
    ).rejects.toMatchObject({ code: 'invalid_arguments', permanent: true });
    expect(slack.sessionOf('C0DOCS', '1.1')?.title).toBe(title);
    expect(errors).toEqual([['agents.sessions.setStatus', 'invalid_arguments']]);
  });

  it('passes a rate limit on with Slack’s wait, without waiting itself', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    slack.fail('agents.sessions.setStatus', { status: 429, retryAfter: 30 });
    await expect(
      sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'processing' }),
    ).rejects.toMatchObject({ code: 'ratelimited', retryAfterMs: 30_000 });
    expect(slack.callsTo('agents.sessions.setStatus')).toHaveLength(1);
  });
});
