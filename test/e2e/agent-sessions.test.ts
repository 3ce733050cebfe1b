import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, buttonClick, messageShortcut, viewSubmission } from '../helpers/payloads.js';

const h = useHarness();

/** The statuses a thread's session went through, a repeated one counted once. */
const statusesOf = (channel: string, threadTs: string) =>
  (h.slack.sessionOf(channel, threadTs)?.history ?? []).filter((s, i, all) => s !== all[i - 1]);

describe("a job's thread as Slack's agent session", () => {
  it('is processing while the agent works, titled and started by the requester, and active when a run ends', async () => {
    const { threadTs, channel, jobId } = await h.startJob({ text: 'Document the webhooks retry policy' });
    await waitFor('session processing', () => h.slack.sessionOf(channel, threadTs)?.status === 'processing');
    expect(h.slack.sessionOf(channel, threadTs)).toMatchObject({
      title: 'Document the webhooks retry policy',
      initiator: 'U0ALICE',
    });

    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('session active', () => h.slack.sessionOf(channel, threadTs)?.status === 'active');

    // A follow-up going out makes it processing again; its outcome makes it active again.
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'Also cover retries' });
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    await waitFor('processing again', () => statusesOf(channel, threadTs).length === 3);
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('second outcome', () => h.slack.threadPosts(threadTs).length === 2);
    await h.settled();
    expect(statusesOf(channel, threadTs)).toEqual(['processing', 'active', 'processing', 'active']);
    // Every call named the thread as Slack documents it.
    for (const call of h.slack.callsTo('agents.sessions.setStatus'))
      expect(call.args).toMatchObject({ channel_id: channel, thread_ts: threadTs });
  });

  it('is made for a job started by a mention, in the mention’s thread', async () => {
    const mention = appMention({ text: '<@U0BOT> Document the CLI flags' });
    await h.anyEvent(mention);
    const session = await waitFor('session', () => h.slack.sessionOf('C0GENERAL', mention.ts));
    expect(session).toMatchObject({ title: 'Document the CLI flags', initiator: 'U0ALICE' });
  });

  it('is made without an initiator for a requester who is not a member of the channel', async () => {
    // Slack takes only a member as initiator; a workflow's or a shortcut's person may not be one.
    h.slack.notAMember('C0GENERAL', 'U0ALICE');
    const { threadTs, channel } = await h.startJob({ text: 'Document the webhooks retry policy' });
    await waitFor('session processing', () => h.slack.sessionOf(channel, threadTs)?.status === 'processing');
    expect(h.slack.sessionOf(channel, threadTs)).toMatchObject({
      title: 'Document the webhooks retry policy',
      initiator: undefined,
    });
  });

  it('is closed when the agent archives the job', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'archived');
    await waitFor('session closed', () => h.slack.sessionOf(channel, threadTs)?.status === 'closed');
  });

  it('gets a bounded, plain, one-line title from hostile text', async () => {
    const text = `<!channel> look\n\u0007at <https://evil.example|docs> ${'x'.repeat(300)}`;
    await h.command({ text });
    const session = await waitFor('session', () => [...h.slack.sessions.values()][0]);
    expect(session.title).toMatch(/^@channel look at docs \(https:\/\/evil\.example\) x+…$/);
    expect([...(session.title ?? '')].length).toBeLessThanOrEqual(80);
  });

  it('retries a status Slack could not take, and goes on without sessions Slack refuses', async () => {
    h.slack.fail('agents.sessions.setStatus', { status: 503 }, { status: 503 });
    const { threadTs, channel, jobId } = await h.startJob();
    await waitFor('session set after the outage', () => h.slack.sessionOf(channel, threadTs));
    expect(h.slack.callsTo('agents.sessions.setStatus').length).toBeGreaterThanOrEqual(3);

    // An app not declared an agent: refused for good, the card still follows the job.
    for (let i = 0; i < 5; i++) h.slack.fail('agents.sessions.setStatus', { error: 'not_allowed' });
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/2');
    await waitFor('outcome posted', () => h.slack.threadPosts(threadTs).length === 1);
    await waitFor('card shows the outcome', () =>
      h.slack.messages.find((m) => m.ts === threadTs)?.text.includes('pull/2'),
    );
    // The session's status goes after the card's edit.
    await waitFor('the refusal logged', () => h.logs.some((l) => l.includes('not_allowed')));
  });

  it('moves to the job started by "Try again", never closed by the job it replaced', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'failed');
    const button = await waitFor('"Try again" on the card', () =>
      (h.slack.messages.find((m) => m.ts === threadTs)?.blocks ?? [])
        .filter((b) => b.type === 'actions')
        .flatMap((b) => b.elements as { action_id: string; value: string }[])
        .find((b) => b.action_id === 'retry_job'),
    );
    await waitFor(
      'session active after the failed run',
      () => h.slack.sessionOf(channel, threadTs)?.status === 'active',
    );
    await h.interact(buttonClick(button, { messageTs: threadTs, responseUrl: h.slack.responseUrl('again') }));
    await waitFor('second create call', () => h.agent.requestsFor('create').length === 2);
    await h.settled();
    expect(statusesOf(channel, threadTs)).toEqual(['processing', 'active', 'processing']);
  });

  it('is made for a job started with the message shortcut, in the message’s thread', async () => {
    const message = { ts: '1700000400.000100', text: 'How do I rotate an API key?' };
    await h.interact(messageShortcut(message, 'C0GENERAL'));
    const view = await waitFor('modal', () => h.slack.views[0]);
    const values = { instruction: 'Add a key rotation guide', message: message.text, channel: 'C0GENERAL' };
    expect((await h.interact(viewSubmission(view, values))).status).toBe(200);
    const session = await waitFor('session', () => h.slack.sessionOf('C0GENERAL', message.ts));
    expect(session).toMatchObject({
      title: 'Add a key rotation guide',
      initiator: 'U0ALICE',
      status: 'processing',
    });
  });
});
