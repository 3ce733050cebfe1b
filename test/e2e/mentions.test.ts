import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention } from '../helpers/payloads.js';

const h = useHarness({ THREAD_CONTEXT_MAX_CHARS: '300' });

describe('@docs-agent mentions', () => {
  it('starts a job in the mention’s own thread, with the status card as the first reply', async () => {
    const mention = appMention({ text: '<@U0BOT> Document the webhooks retry policy' });
    const res = await h.anyEvent(mention);
    expect(res.status).toBe(200);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document the webhooks retry policy' });

    const card = await waitFor('status card', () => h.slack.threadPosts(mention.ts)[0]);
    expect(card.blocks?.length).toBeGreaterThan(0);
    const job = await waitFor('job active', async () => {
      const j = await h.app.store.findJobByThread('C0GENERAL', mention.ts);
      return j?.phase === 'active' ? j : undefined;
    });
    expect(job).toMatchObject({ origin: 'mention', threadTs: mention.ts, cardTs: card.ts });
    // The mention's thread is the job's session, shown working; the mention carries no emoji meanwhile.
    await waitFor(
      'working session',
      () => h.slack.sessionOf('C0GENERAL', mention.ts)?.status === 'processing',
    );
    expect(h.slack.reactionsOn('C0GENERAL', mention.ts)).toEqual([]);

    h.agent.complete('job_1', 'https://github.com/example/docs/pull/7');
    const outcome = await waitFor('outcome', () => h.slack.threadPosts(mention.ts)[1]);
    expect(outcome.text).toContain('pull/7');
    await waitFor(
      'done emoji',
      () => h.slack.reactionsOn('C0GENERAL', mention.ts).join() === 'white_check_mark',
    );
  });

  it('gives the agent the thread’s earlier messages as bounded, named context', async () => {
    const root = '1700000300.000100';
    h.slack.humans.push(
      { channel: 'C0GENERAL', ts: root, user: 'U0BOB', text: 'Customers keep asking about token expiry' },
      {
        channel: 'C0GENERAL',
        ts: '1700000300.000200',
        thread_ts: root,
        user: 'U0CARL',
        text: `old ${'x'.repeat(400)}`,
      },
      {
        channel: 'C0GENERAL',
        ts: '1700000300.000300',
        thread_ts: root,
        user: 'U0ALICE',
        text: 'Tokens last <https://x.test/t|90 days>, ask <@U0BOB>',
      },
      {
        channel: 'C0GENERAL',
        ts: '1700000300.000500',
        thread_ts: root,
        user: 'U0BOB',
        text: 'written after the mention',
      },
    );
    // An earlier card of the bot in the thread is not context.
    h.slack.messages.push({
      channel: 'C0GENERAL',
      ts: '1700000300.000350',
      thread_ts: root,
      text: 'bot card text',
      bot_id: 'B0BOT',
      user: 'U0BOT',
      metadata: { event_type: 'docs_agent_root', event_payload: { key: 'root:99' } },
    });
    const mention = appMention({
      text: '<@U0BOT> add this to the auth FAQ',
      ts: '1700000300.000400',
      thread_ts: root,
    });
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const prompt = String(h.agent.requestsFor('create')[0]?.body?.prompt);
    expect(prompt).toMatch(/^add this to the auth FAQ\n\n--- Context [0-9a-f]{12}:/);
    expect(prompt).toContain('alice: Tokens last 90 days (https://x.test/t), ask @bob');
    expect(prompt).toContain('bob: Customers keep asking about token expiry');
    // Bounded: the long old message is left out and counted; later messages are not context.
    expect(prompt).not.toContain('old xxx');
    expect(prompt).toContain('[1 message left out for length]');
    expect(prompt).not.toContain('written after the mention');
    expect(prompt).not.toContain('bot card text');
    expect(prompt).toMatch(/\n--- End of context [0-9a-f]{12} ---$/);

    const card = await waitFor('card in the thread', () =>
      h.slack.threadPosts(root).find((m) => m.text !== 'bot card text'),
    );
    const job = await h.app.store.findJobByThread('C0GENERAL', root);
    expect(job).toMatchObject({ origin: 'mention', cardTs: card.ts, contextTs: mention.ts });
  });

  it('asks Slack for the workspace of authors whose thread messages do not name it', async () => {
    // The shape of Slack's own conversations.replies example: type, user, text, thread_ts, ts,
    // and no `team`.
    const root = '1700000310.000100';
    const say = (ts: string, user: string, text: string) =>
      h.slack.humans.push({ channel: 'C0GENERAL', ts, thread_ts: root, user, text, team: null });
    say(root, 'U0BOB', 'island');
    say('1700000310.000200', 'U0BOB', 'one island');
    say('1700000310.000300', 'U0PARTNER', 'two island');
    say('1700000310.000400', 'U0DARK', 'three island');
    say('1700000310.000500', 'U0BOB', 'four island');
    h.slack.externalMembers.set('U0PARTNER', 'T0PARTNER');
    h.slack.failIf('users.info', (args) => args.user === 'U0DARK', { error: 'internal_error' }, 5);
    await h.anyEvent(
      appMention({ text: '<@U0BOT> write this up', ts: '1700000310.000600', thread_ts: root }),
    );
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const prompt = String(h.agent.requestsFor('create')[0]?.body?.prompt);
    expect(prompt).toContain('bob: island');
    expect(prompt).toContain('bob: one island');
    expect(prompt).toContain('bob: four island');
    // Another organisation's member, and someone Slack could not say anything about, stay out.
    expect(prompt).not.toContain('two island');
    expect(prompt).not.toContain('three island');
    expect(prompt).toContain(
      '[2 messages left out: by people who cannot instruct the docs agent themselves]',
    );
    // Asked once per author however many messages they wrote (and once more for the name shown).
    const asked = h.slack.callsTo('users.info').map((c) => c.args.user);
    expect(asked.filter((u) => u === 'U0BOB')).toHaveLength(2);
  });

  it('treats a mention in a thread that has a job as a follow-up, and a retried event as one', async () => {
    const { threadTs, jobId } = await h.startJob();
    const mention = appMention({ text: '<@U0BOT> also cover pagination', thread_ts: threadTs });
    await h.anyEvent(mention);
    // Slack's retry, and the same message as a plain message event.
    await h.anyEvent(mention);
    await h.event({ thread_ts: threadTs, ts: mention.ts, text: mention.text });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]).toMatchObject({
      jobId,
      body: { prompt: 'also cover pagination' },
    });
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
    expect(h.agent.requestsFor('create')).toHaveLength(1);
  });

  it('starts one job for a mention seen twice, and never takes its own message as a follow-up', async () => {
    const mention = appMention({ text: '<@U0BOT> Fix the broken links' });
    await h.anyEvent(mention);
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await waitFor(
      'job active',
      async () => (await h.app.store.findJobByThread('C0GENERAL', mention.ts))?.phase === 'active',
    );
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });

  it('starts a new job in a thread whose job never started, and counts a broadcast mention', async () => {
    h.agent.fail('create', { status: 400, body: JSON.stringify({ error: 'Prompt rejected' }) });
    const first = appMention({ text: '<@U0BOT> Document everything' });
    await h.anyEvent(first);
    await waitFor('refusal', () =>
      h.slack.threadPosts(first.ts).some((m) => m.text.includes('Prompt rejected')),
    );
    await waitFor(
      'not started',
      async () =>
        (await h.app.store.findJobByThread('C0GENERAL', first.ts)) === undefined ||
        (await h.app.store.findJobByThread('C0GENERAL', first.ts))?.phase === 'not_started',
    );

    const again = {
      ...appMention({ text: '<@U0BOT> Document the CLI flags', thread_ts: first.ts }),
      subtype: 'thread_broadcast',
    };
    await h.anyEvent(again);
    await waitFor('second create', () => h.agent.requestsFor('create').length === 2);
    // The bot's own card and notice in the thread are not context.
    expect(h.agent.requestsFor('create')[1]?.body?.prompt).toBe('Document the CLI flags');
    const job = await waitFor('new job active', async () => {
      const j = await h.app.store.findJobByThread('C0GENERAL', first.ts);
      return j?.phase === 'active' ? j : undefined;
    });
    expect(job.triggerKey).toBe(`mention:C0GENERAL:${again.ts}`);
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });

  it('takes replies posted before a late mention was recorded as follow-ups', async () => {
    // Slack delivered the replies' message events while the mention's delivery was being retried.
    const mention = appMention({ text: '<@U0BOT> Document the export API', ts: '1700000500.000100' });
    h.slack.humans.push(
      {
        channel: 'C0GENERAL',
        ts: '1700000500.000200',
        thread_ts: mention.ts,
        user: 'U0BOB',
        text: 'include CSV',
      },
      {
        channel: 'C0GENERAL',
        ts: '1700000500.000300',
        thread_ts: mention.ts,
        user: 'U0CARL',
        text: '// lunch?',
      },
      {
        channel: 'C0GENERAL',
        ts: '1700000500.000400',
        thread_ts: mention.ts,
        user: 'U0X',
        bot_id: 'B0CI',
        text: 'build ok',
      },
    );
    await h.event({
      channel: 'C0GENERAL',
      thread_ts: mention.ts,
      ts: '1700000500.000200',
      user: 'U0BOB',
      text: 'include CSV',
    });
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.body).toEqual({ prompt: 'include CSV' });
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
  });

  it('takes as follow-ups only the replies a live reply would be, when catching up', async () => {
    const mention = appMention({ text: '<@U0BOT> Document the import API', ts: '1700000510.000100' });
    const reply = (ts: string, user: string, text: string, subtype?: string) =>
      h.slack.humans.push({
        channel: 'C0GENERAL',
        ts,
        thread_ts: mention.ts,
        user,
        text,
        ...(subtype ? { subtype } : {}),
      });
    reply('1700000510.000200', 'U0DAN', '<@U0DAN> has joined the channel', 'channel_join');
    reply('1700000510.000300', 'U0BOB', 'include JSON lines', 'thread_broadcast');
    reply('1700000510.000400', 'U0BOB', 'and mention the size limit');
    reply('1700000510.000500', 'U0BOB', 'set the channel topic: imports', 'channel_topic');
    await h.anyEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    await waitFor('follow-ups', () => h.agent.requestsFor('message').length >= 2);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body)).toEqual([
      { prompt: 'include JSON lines' },
      { prompt: 'and mention the size limit' },
    ]);
  });

  it('explains a bare mention privately and starts nothing', async () => {
    await h.anyEvent(appMention({ text: '<@U0BOT>  ' }));
    const note = await waitFor('ephemeral', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(note.args).toMatchObject({ channel: 'C0GENERAL', user: 'U0ALICE' });
    expect(String(note.args.text)).toContain('Tell me what to do');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('ignores mentions by other apps and asides', async () => {
    await h.anyEvent({ ...appMention({ text: '<@U0BOT> deploy' }), bot_id: 'B0OTHER' });
    await h.anyEvent(appMention({ text: '<@U0BOT> // just showing Ann the bot' }));
    // Control: a plain mention after them starts the one job.
    await h.anyEvent(appMention({ text: '<@U0BOT> Document the CLI' }));
    await waitFor('control job', () => h.agent.requestsFor('create').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('create').map((r) => r.body)).toEqual([{ prompt: 'Document the CLI' }]);
    expect(await h.app.store.recentJobs({ requesterId: 'U0ALICE' }, 5)).toHaveLength(1);
  });
});
