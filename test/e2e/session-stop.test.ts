import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, eventEnvelope } from '../helpers/payloads.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';

/** `agent_session_stopped` as Slack documents it, signed and sent; the same `eventId` is a re-delivery. */
function pressStop(
  h: Harness,
  at: { channel: string; threadTs: string },
  user = 'U0ALICE',
  eventId?: string,
) {
  const event = {
    type: 'agent_session_stopped',
    channel: at.channel,
    user,
    thread_ts: at.threadTs,
    streaming_message_ts: [],
    event_ts: `1783536983.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`,
  };
  return postSigned(h.base(), eventEnvelope(event, eventId ? { event_id: eventId } : {}), {
    contentType: 'application/json',
    secret: SIGNING_SECRET,
  });
}

const stopPosts = (h: Harness, threadTs: string) =>
  h.slack.threadPosts(threadTs).filter((m) => m.text.includes('pressed stop'));

describe('the stop button of a running job', () => {
  const h = useHarness();

  it('says plainly that the agent will finish, leaves processing, and still posts the outcome', async () => {
    const at = await h.startJob();
    await waitFor('processing', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'processing');
    expect((await pressStop(h, at)).status).toBe(200);
    const post = await waitFor('stop said in the thread', () => stopPosts(h, at.threadTs)[0]);
    expect(post.text).toContain('Nothing was waiting to be withdrawn');
    expect(post.text).toContain('it will finish, and its outcome will still be posted in this thread');
    await waitFor('session active', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'active');

    h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/3');
    await waitFor('outcome posted', () =>
      h.slack.threadPosts(at.threadTs).some((m) => m.text.includes('pull/3')),
    );
    await h.settled();
    expect(h.slack.sessionOf(at.channel, at.threadTs)?.status).toBe('active');
  });

  it('acts once on a re-delivered event and on a second press', async () => {
    const at = await h.startJob();
    await Promise.all([pressStop(h, at, 'U0ALICE', 'EvSTOP1'), pressStop(h, at, 'U0ALICE', 'EvSTOP1')]);
    await pressStop(h, at);
    await waitFor('stop said', () => stopPosts(h, at.threadTs).length > 0);
    await h.settled();
    expect(stopPosts(h, at.threadTs)).toHaveLength(1);
  });

  it('is refused, privately, to someone who may not instruct the agent there', async () => {
    h.slack.guests.add('U0GUEST');
    const at = await h.startJob();
    await pressStop(h, at, 'U0GUEST');
    const told = await waitFor('told privately', () =>
      h.slack.callsTo('chat.postEphemeral').find((c) => c.args.user === 'U0GUEST'),
    );
    expect(String(told.args.text)).toContain('Nothing was stopped');
    await h.settled();
    expect(stopPosts(h, at.threadTs)).toHaveLength(0);
    expect(h.slack.sessionOf(at.channel, at.threadTs)?.status).toBe('processing');
  });

  it('from a user that is not a user id: answered, logged by its field, nothing posted to anyone', async () => {
    const at = await h.startJob();
    await waitFor('processing', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'processing');
    expect((await pressStop(h, at, '<!channel>')).status).toBe(200);
    await waitFor('logged', () =>
      h.logs.find((l) => l.includes('agent_session_stopped event not understood')),
    );
    await h.settled();
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(h.slack.callsTo('users.info').filter((c) => c.args.user === '<!channel>')).toEqual([]);
    expect(stopPosts(h, at.threadTs)).toHaveLength(0);
    expect(h.slack.sessionOf(at.channel, at.threadTs)?.status).toBe('processing');
    expect(h.logs.join('\n')).not.toContain('<!channel>');
  });
});

describe('the stop button with a reply held until Slack confirms its author', () => {
  const h = useHarness();

  it('withdraws the held reply; it never goes out once Slack can say who wrote it', async () => {
    const at = await h.startJob();
    h.slack.outage.begin('users.info');
    await h.event({
      channel: at.channel,
      thread_ts: at.threadTs,
      user: 'U0CAROL',
      text: 'also cover retries',
    });
    await waitFor('held note', () =>
      h.slack.callsTo('chat.postEphemeral').find((c) => c.args.user === 'U0CAROL'),
    );
    await pressStop(h, at);
    const post = await waitFor('stop said', () => stopPosts(h, at.threadTs)[0]);
    expect(post.text).toContain('Withdrawn before it reached the docs agent: a reply from <@U0CAROL>.');
    h.slack.outage.end('users.info');
    h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/5');
    await waitFor('outcome', () => h.slack.threadPosts(at.threadTs).some((m) => m.text.includes('pull/5')));
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });
});

describe('the stop button with replies in the batch window', () => {
  const h = useHarness({ FOLLOW_UP_BATCH_MS: '60000' });

  it('withdraws the waiting replies and names them; the agent never gets them', async () => {
    const at = await h.startJob();
    await h.event({ channel: at.channel, thread_ts: at.threadTs, user: 'U0BOB', text: 'Also cover retries' });
    await waitFor('reply waiting', async () => {
      const job = await h.app.store.findJobByThread(at.channel, at.threadTs);
      return job && (await h.app.store.readyRuns(job.id)).length === 1;
    });
    await pressStop(h, at, 'U0BOB');
    const post = await waitFor('stop said', () => stopPosts(h, at.threadTs)[0]);
    expect(post.text).toContain('Withdrawn before it reached the docs agent: a reply from <@U0BOB>.');
    expect(post.text).toContain('it will finish');
    const job = await h.app.store.findJobByThread(at.channel, at.threadTs);
    expect((await h.app.store.getRuns(job?.id ?? 0)).map((r) => r.state)).toEqual(['sent', 'failed']);
    await waitFor('session active', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'active');
    h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/4');
    await waitFor('outcome', () => h.slack.threadPosts(at.threadTs).some((m) => m.text.includes('pull/4')));
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });
});

/** Every status the thread's session was given, in order (what `agents.sessions.setStatus` received). */
const statuses = (h: Harness, at: { channel: string; threadTs: string }) =>
  h.slack
    .callsTo('agents.sessions.setStatus')
    .filter((c) => c.args.channel_id === at.channel && c.args.thread_ts === at.threadTs)
    .map((c) => String(c.args.status));

/** The job of a thread, as the store has it. */
const jobOf = (h: Harness, at: { channel: string; threadTs: string }) =>
  h.app.store.findJobByThread(at.channel, at.threadTs);

describe('the stop button while an instruction is on its way to the agent', () => {
  const h = useHarness();

  it('pressed while the job is being started (create call in flight): its first run is the one stopped', async () => {
    let answerCreate = () => {};
    h.agent.fail('create', { held: new Promise<void>((resolve) => (answerCreate = resolve)) });
    const mention = appMention({ text: '<@U0BOT> Document the webhooks retry policy' });
    expect((await h.anyEvent(mention)).status).toBe(200);
    await waitFor('create call in flight', () => h.agent.requestsFor('create').length === 1);
    const at = { channel: 'C0GENERAL', threadTs: mention.ts };
    expect((await jobOf(h, at))?.phase).toBe('creating');

    expect((await pressStop(h, at)).status).toBe(200);
    const post = await waitFor('stop said', () => stopPosts(h, at.threadTs)[0]);
    expect(post.text).toContain('it will finish, and its outcome will still be posted');
    expect(await jobOf(h, at)).toMatchObject({ phase: 'creating', runCount: 0, stoppedRun: 1 });

    answerCreate();
    await waitFor('the agent has the job', async () => (await jobOf(h, at))?.phase === 'active');
    await h.settled();
    expect(await jobOf(h, at)).toMatchObject({ runCount: 1, stoppedRun: 1 });
    // Slack was told the session is not processing, once, and never told otherwise for this run.
    expect(statuses(h, at)).toEqual(['active']);
    expect(h.slack.sessionOf(at.channel, at.threadTs)?.status).toBe('active');

    h.agent.complete('job_1', 'https://github.com/example/docs/pull/8');
    await waitFor('outcome posted', () =>
      h.slack.threadPosts(at.threadTs).some((m) => m.text.includes('pull/8')),
    );
  });

  it('pressed while a reply is being given to the agent (its call in flight): the run it starts is stopped too', async () => {
    const at = await h.startJob();
    await waitFor('processing', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'processing');
    let answerMessage = () => {};
    h.agent.fail('message', { held: new Promise<void>((resolve) => (answerMessage = resolve)) });
    await h.event({
      channel: at.channel,
      thread_ts: at.threadTs,
      user: 'U0ALICE',
      text: 'Also cover retries',
    });
    await waitFor('follow-up in flight', () => h.agent.requestsFor('message').length === 1);

    expect((await pressStop(h, at)).status).toBe(200);
    await waitFor('stop said', () => stopPosts(h, at.threadTs)[0]);
    await waitFor('session active', () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'active');
    const afterStop = statuses(h, at).length;

    answerMessage();
    await waitFor('the agent took the reply', async () => (await jobOf(h, at))?.runCount === 2);
    await h.settled();
    // The run the reply started is not shown as processing with a stop button already pressed.
    expect(statuses(h, at).slice(afterStop)).not.toContain('processing');
    expect(h.slack.sessionOf(at.channel, at.threadTs)?.status).toBe('active');

    // A reply after the stop is a new instruction: its run is processing again.
    await h.event({ channel: at.channel, thread_ts: at.threadTs, user: 'U0ALICE', text: 'And the SDK' });
    await waitFor('run 3', async () => (await jobOf(h, at))?.runCount === 3);
    await waitFor(
      'processing again',
      () => h.slack.sessionOf(at.channel, at.threadTs)?.status === 'processing',
    );
  });
});
