import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { PANE_DM, paneEvent } from '../helpers/payloads.js';

let h: Harness;
afterEach(() => stopChecked(h));

let counter = 0;
const nextTs = () => `1700000500.${String(++counter).padStart(6, '0')}`;

/** A message from Alice in her direct message with the bot. */
const dm = (text: string, fields: { ts?: string; thread_ts?: string; user?: string } = {}) => ({
  channel: PANE_DM,
  channel_type: 'im',
  text,
  ts: fields.ts ?? nextTs(),
  ...fields,
});

const jobIn = (threadTs: string) => h.app.store.findJobByThread(PANE_DM, threadTs);

describe('direct messages to the bot', () => {
  it('starts a job whose thread is the message, takes replies there as follow-ups, and posts the outcome there', async () => {
    h = await startHarness();
    const first = dm('Document the webhooks retry policy');
    const res = await h.event(first);
    expect(res.status).toBe(200);
    // Recorded before Slack was answered.
    expect(await jobIn(first.ts)).toMatchObject({ origin: 'direct', threadTs: first.ts });
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document the webhooks retry policy' });
    const card = await waitFor('status card in the DM thread', () => h.slack.threadPosts(first.ts)[0]);
    expect(card.channel).toBe(PANE_DM);
    await waitFor('job active', async () => (await jobIn(first.ts))?.phase === 'active');

    // A reply in the thread (Bolt's assistant routes threaded DMs) is a follow-up, as in a channel.
    await h.event(dm('Also cover the backoff schedule', { thread_ts: first.ts }));
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.body).toEqual({ prompt: 'Also cover the backoff schedule' });

    h.agent.complete('job_1', 'https://github.com/example/docs/pull/9');
    const outcome = await waitFor('outcome in the DM thread', () =>
      h.slack.threadPosts(first.ts).find((m) => m.text.includes('pull/9')),
    );
    expect(outcome.channel).toBe(PANE_DM);
    // Not an assistant thread: no status line to set.
    expect(h.slack.callsTo('assistant.threads.setStatus')).toHaveLength(0);

    // `/docs-agent list` names where the job ran in words.
    const list = await h.command({ text: 'list' });
    expect(JSON.stringify(await list.json())).toContain('direct message');
  });

  it('recognises a re-delivered message and ignores the bot’s own posts and asides', async () => {
    h = await startHarness();
    const first = dm('Add an FAQ entry about SSO');
    await h.event(first, { event_id: 'EvDM1' });
    await h.event(first, { event_id: 'EvDM1' }, { headers: { 'x-slack-retry-num': '1' } });
    await h.event({ ...dm('bot talk'), bot_id: 'B0BOT', user: 'U0BOT' });
    await h.event(dm('// just a note to myself'));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect(h.slack.messages.filter((m) => m.metadata?.event_type === 'docs_agent_root')).toHaveLength(1);
  });

  it('answers Slack with an error for a direct message it could not record, so Slack sends it again', async () => {
    h = await startHarness();
    await h.app.store.close();
    const message = dm('Document the export API');
    expect((await h.event(message)).status).toBe(500);
    // Slack's last re-delivery: no further one will come, so the person is told.
    const last = await h.event(message, {}, { headers: { 'x-slack-retry-num': '3' } });
    expect(last.status).toBe(200);
    const note = await waitFor('private note', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(note.args).toMatchObject({ channel: PANE_DM, user: 'U0ALICE' });
    expect(String(note.args.text)).toContain('could not record that instruction');
    expect(h.agent.requests).toHaveLength(0);
  });

  it('holds the access rules: guests, people and the hourly limit', async () => {
    h = await startHarness({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '1' });
    h.slack.guests.add('U0GUEST');
    const guest = dm('Rewrite the pricing page', { user: 'U0GUEST' });
    await h.event(guest);
    const refusal = await waitFor('guest refused privately', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(refusal.args).toMatchObject({ channel: PANE_DM, user: 'U0GUEST' });
    expect(String(refusal.args.text)).toContain('Guest accounts');

    await h.event(dm('First instruction'));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await h.event(dm('Second instruction'));
    await waitFor('hourly limit', () =>
      h.slack.callsTo('chat.postEphemeral').some((c) => String(c.args.text).includes('in the last hour')),
    );
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
  });

  it('refuses direct messages when a channel allow-list is set, unless ALLOW_DIRECT_MESSAGES=true', async () => {
    h = await startHarness({ ALLOWED_CHANNEL_IDS: 'C0DOCS' });
    await h.event(dm('Document the CLI'));
    const refusal = await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(refusal.args.text)).toContain('no instructions by direct message');
    await h.settled();
    expect(h.agent.requests).toHaveLength(0);
    await h.stop();

    h = await startHarness({ ALLOWED_CHANNEL_IDS: 'C0DOCS', ALLOW_DIRECT_MESSAGES: 'true' });
    await h.event(dm('Document the CLI'));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await h.stop();

    h = await startHarness({ ALLOW_DIRECT_MESSAGES: 'false' });
    await h.event(dm('Document the CLI'));
    await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    await h.settled();
    expect(h.agent.requests).toHaveLength(0);
  });
});

describe('the assistant pane', () => {
  it('suggests prompts, starts a job from the first message, shows its status and title, and posts the outcome in the thread', async () => {
    h = await startHarness({ SUGGESTED_PROMPTS: 'Fix a page|Fix this page: ;Summarise the changelog' });
    const thread = nextTs();
    expect((await h.anyEvent(paneEvent('started', thread))).status).toBe(200);
    const prompts = await waitFor(
      'suggested prompts',
      () => h.slack.callsTo('assistant.threads.setSuggestedPrompts')[0],
    );
    expect(prompts.args).toMatchObject({
      channel_id: PANE_DM,
      thread_ts: thread,
      prompts: [
        { title: 'Fix a page', message: 'Fix this page:' },
        { title: 'Summarise the changelog', message: 'Summarise the changelog' },
      ],
    });

    const first = dm('Document <!here> the *new* rate limits', { thread_ts: thread });
    await h.event(first);
    expect(await jobIn(thread)).toMatchObject({ origin: 'direct', threadTs: thread });
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await waitFor('working status', () =>
      h.slack.callsTo('assistant.threads.setStatus').some((c) => c.args.status === 'is working on it…'),
    );
    const statuses = h.slack.callsTo('assistant.threads.setStatus').map((c) => c.args.status);
    expect(statuses).toEqual(['is starting the job…', 'is working on it…']);
    const title = h.slack.callsTo('assistant.threads.setTitle')[0];
    expect(title?.args).toMatchObject({
      channel_id: PANE_DM,
      thread_ts: thread,
      title: 'Document @here the *new* rate limits',
    });
    // The status card is a reply in the assistant thread, after the starting status.
    const card = await waitFor('status card', () => h.slack.threadPosts(thread)[0]);
    const cardCall = h.slack.callsTo('chat.postMessage').find((c) => c.args.thread_ts === thread);
    const starting = h.slack.callsTo('assistant.threads.setStatus')[0];
    expect(starting && cardCall && starting.at <= cardCall.at).toBe(true);
    expect(card.channel).toBe(PANE_DM);

    // A second message in the thread is a follow-up.
    await waitFor('job active', async () => (await jobIn(thread))?.phase === 'active');
    await h.event(dm('and mention the burst allowance', { thread_ts: thread }));
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);

    h.agent.complete('job_1', null);
    await waitFor('outcome in the assistant thread', () =>
      h.slack.threadPosts(thread).find((m) => m.text.includes('without changing any files')),
    );
  });

  it('runs beside a channel on that channel’s project and under its allow-list, following the pane as it moves', async () => {
    h = await startHarness(
      { CHANNEL_PROJECTS: 'C0API:api-docs', ALLOWED_CHANNEL_IDS: 'C0API,C0GENERAL' },
      { projects: ['proj_test', 'api-docs'] },
    );
    const beside = nextTs();
    await h.anyEvent(paneEvent('started', beside, 'C0API'));
    await h.event(dm('Document the pagination cursor', { thread_ts: beside }));
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.projectId).toBe('api-docs');
    expect(await jobIn(beside)).toMatchObject({ projectId: 'api-docs' });

    // The pane moved beside a channel the bot does not serve: a new thread there is refused.
    const elsewhere = nextTs();
    await h.anyEvent(paneEvent('started', elsewhere, 'C0GENERAL'));
    await h.anyEvent(paneEvent('context_changed', elsewhere, 'C0RANDOM'));
    await h.event(dm('Rewrite the homepage', { thread_ts: elsewhere }));
    const refusal = await waitFor('refused', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(refusal.args.text)).toContain('not enabled in this channel');

    // No pane context and an allow-list: refused too (fail closed).
    await h.event(dm('Plain DM instruction'));
    await waitFor('second refusal', () => h.slack.callsTo('chat.postEphemeral').length === 2);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
  });
});

describe('a job started by direct message, with NOTIFY_REQUESTER=dm', () => {
  it('tells its requester the outcome once, in the job’s own thread', async () => {
    h = await startHarness({ NOTIFY_REQUESTER: 'dm' });
    const first = dm('Document the rate limits');
    await h.event(first);
    await waitFor('job active', async () => (await jobIn(first.ts))?.phase === 'active');
    h.agent.complete('job_1', 'https://github.com/example/docs/pull/11');
    await waitFor('outcome in the DM thread', () =>
      h.slack.threadPosts(first.ts).find((m) => m.text.includes('pull/11')),
    );
    await h.settled();
    // The thread is already in the requester's direct messages: no second copy beside it.
    expect(h.slack.messages.filter((m) => m.channel === PANE_DM && !m.thread_ts)).toHaveLength(0);
    expect(h.slack.callsTo('conversations.open')).toHaveLength(0);
  });
});
