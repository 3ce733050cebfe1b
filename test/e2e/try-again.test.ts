import { describe, expect, it } from 'vitest';
import { type Harness, startHarness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick } from '../helpers/payloads.js';

type Message = { ts: string; text: string; blocks?: Record<string, unknown>[] };
const buttonsOf = (m: Message | undefined) =>
  (m?.blocks ?? [])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => (b.elements ?? []) as { action_id: string; value?: string }[]);
const retryButton = (m: Message | undefined) => buttonsOf(m).find((b) => b.action_id === 'retry_job');

/** Waits until the card at `ts` offers "Try again", and returns the button. */
async function offered(h: Harness, ts: string) {
  const button = await waitFor('"Try again" on the card', () =>
    retryButton(h.slack.messages.find((m) => m.ts === ts)),
  );
  return { action_id: button.action_id, value: button.value ?? '' };
}

/** A job whose run the agent reports failed; returns its thread and the card's button. */
async function failedJob(h: Harness) {
  const started = await h.startJob();
  h.agent.setStatus(started.jobId, 'failed');
  const button = await offered(h, started.threadTs);
  // The card, the thread's root, shows the failure itself: it carries no emoji.
  await h.settled();
  expect(h.slack.reactionsOn(started.channel, started.threadTs)).toEqual([]);
  return { ...started, button };
}

const click = (h: Harness, button: { action_id: string; value: string }, messageTs: string, user?: string) =>
  h.interact(
    buttonClick(button, {
      messageTs,
      responseUrl: h.slack.responseUrl(`click-${Math.random()}`),
      ...(user ? { user } : {}),
    }),
  );

describe('"Try again" on a failed job', () => {
  const h = useHarness();

  it('starts a new job in the same thread from the stored instruction; the thread moves to it', async () => {
    const { threadTs, channel, button } = await failedJob(h);
    const res = await click(h, button, threadTs);
    expect(res.status).toBe(200);
    await waitFor('second create call', () => h.agent.requestsFor('create').length === 2);
    const [first, second] = h.agent.requestsFor('create');
    expect(second?.body).toEqual(first?.body);

    // The new job's card is a reply in the thread; the old card says so and loses its button.
    const newCard = await waitFor('new card in the thread', () =>
      h.slack.threadPosts(threadTs).find((m) => m.text.includes('asked the docs agent')),
    );
    expect(newCard.text).toContain('<@U0ALICE>');
    await waitFor('old card says retried', () =>
      h.slack.messages.find((m) => m.ts === threadTs)?.text.includes('Retried as a new job'),
    );
    expect(retryButton(h.slack.messages.find((m) => m.ts === threadTs))).toBeUndefined();
    const moved = await waitFor('thread belongs to the new job', async () => {
      const job = await h.app.store.findJobByThread(channel, threadTs);
      return job?.phase === 'active' && job.agentJobId === 'job_2' ? job : undefined;
    });
    expect(moved.cardTs).toBe(newCard.ts);
    expect((await h.app.store.getJob(Number(button.value)))?.phase).toBe('retried');

    // A reply in the thread now goes to the new agent job.
    await h.event({ thread_ts: threadTs, text: 'Also cover retries' });
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.jobId).toBe('job_2');
    // The new job owns the root, and its session shows it working.
    await waitFor('session working', () => h.slack.sessionOf(channel, threadTs)?.status === 'processing');
    // Its card is a reply: the root, the first card, carries the new job's emoji once it is done.
    h.agent.complete('job_2', 'https://github.com/example/docs/pull/4');
    await waitFor('done emoji', () => h.slack.reactionsOn(channel, threadTs).join() === 'white_check_mark');
  });

  it('takes a click from an org-wide install (`team` null, the org in `enterprise`)', async () => {
    const { threadTs, button } = await failedJob(h);
    const payload = buttonClick(button, { messageTs: threadTs, responseUrl: h.slack.responseUrl('org') });
    const res = await h.interact({
      ...payload,
      team: null,
      enterprise: { id: 'E0ORG', name: 'Example Org' },
      is_enterprise_install: true,
      user: { id: 'W0GRIDALICE', username: 'alice', team_id: 'T0TEST' },
    });
    expect(res.status).toBe(200);
    await waitFor('second create call', () => h.agent.requestsFor('create').length === 2);
    const job = await waitFor('the retry recorded', async () => {
      const j = await h.app.store.findJobByThread('C0GENERAL', threadTs);
      return j?.id !== Number(button.value) ? j : undefined;
    });
    expect(job).toMatchObject({ requesterId: 'W0GRIDALICE', teamId: 'T0TEST' });
  });

  it('starts exactly one job under double clicks and re-deliveries', async () => {
    const { threadTs, button } = await failedJob(h);
    const payload = buttonClick(button, { messageTs: threadTs, responseUrl: h.slack.responseUrl('dbl') });
    const answers = await Promise.all([h.interact(payload), h.interact(payload), click(h, button, threadTs)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    await waitFor('second create call', () => h.agent.requestsFor('create').length === 2);
    await h.interact(payload);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(2);
    expect(h.slack.threadPosts(threadTs).filter((m) => m.text.includes('asked the docs agent'))).toHaveLength(
      1,
    );
    expect(h.slack.responses).toEqual([]);
  });

  it('is offered when the create call failed, and when nobody can tell whether it started', async () => {
    for (const fault of [{ status: 400, body: JSON.stringify({ error: 'Bad prompt' }) }, { status: 500 }]) {
      const before = h.agent.requestsFor('create').length;
      h.agent.fail('create', fault);
      await h.command();
      const root = await waitFor('root', () =>
        h.slack.messages.filter((m) => !m.thread_ts).at(before === 0 ? 0 : 1),
      );
      const button = await offered(h, root.ts);
      await click(h, button, root.ts);
      await waitFor('retry created upstream', () => h.agent.requestsFor('create').length === before + 2);
      await waitFor('the thread has the new job', async () => {
        const job = await h.app.store.findJobByThread(root.channel, root.ts);
        return job?.phase === 'active' && job.id !== Number(button.value);
      });
    }
  });

  it('lets another allowed person press it: the new job is theirs', async () => {
    const { threadTs, channel, button } = await failedJob(h);
    await click(h, button, threadTs, 'U0BOB');
    const job = await waitFor('the thread has the new job', async () => {
      const found = await h.app.store.findJobByThread(channel, threadTs);
      return found?.phase === 'active' ? found : undefined;
    });
    expect(job.requesterId).toBe('U0BOB');
    expect(await h.app.store.recentInstructions('U0BOB', 0)).toMatchObject({ count: 1 });
  });

  it('is not offered on a job that succeeded, and a forged click on one starts nothing', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('card shows done', () =>
      h.slack.messages.find((m) => m.ts === threadTs)?.text.includes('Done'),
    );
    expect(retryButton(h.slack.messages.find((m) => m.ts === threadTs))).toBeUndefined();
    const job = await h.app.store.findJobByThread(channel, threadTs);
    await click(h, { action_id: 'retry_job', value: String(job?.id) }, threadTs);
    const reply = await waitFor('private answer', () => h.slack.responses[0]);
    expect(reply.body.response_type).toBe('ephemeral');
    expect(String(reply.body.text)).toContain('cannot be tried again');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
  });
});

describe('who may press "Try again"', () => {
  it('refuses, privately, people who may not instruct the agent (allow-list, guests)', async () => {
    const h = await startHarness({ ALLOWED_USER_IDS: 'U0ALICE,U0GUEST' });
    try {
      h.slack.guests.add('U0GUEST');
      const { threadTs, button } = await failedJob(h);
      for (const user of ['U0MALLORY', 'U0GUEST']) await click(h, button, threadTs, user);
      await waitFor('two private refusals', () => h.slack.responses.length === 2);
      expect(h.slack.responses.map((r) => r.body.response_type)).toEqual(['ephemeral', 'ephemeral']);
      expect(String(h.slack.responses[0]?.body.text)).toContain('not on the list of people');
      expect(String(h.slack.responses[1]?.body.text)).toContain('Guest accounts');
      await h.settled();
      expect(h.agent.requestsFor('create')).toHaveLength(1);
      expect(retryButton(h.slack.messages.find((m) => m.ts === threadTs))).toBeDefined();
    } finally {
      await h.stop();
    }
  });

  it("counts against the presser's hourly limit: over it, they are told privately and nothing changes", async () => {
    const h = await startHarness({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '1' });
    try {
      const { threadTs, button } = await failedJob(h);
      // Alice used her one instruction of the hour: her retry is refused when the job starts.
      await click(h, button, threadTs);
      const refusal = await waitFor('private refusal', () => h.slack.responses[0]);
      expect(refusal.body.response_type).toBe('ephemeral');
      expect(String(refusal.body.text)).toContain('instructions in the last hour');
      expect(String(refusal.body.text)).toMatch(/try again <!date\^\d+\^/);
      await h.settled();
      expect(h.agent.requestsFor('create')).toHaveLength(1);
      // Nothing changed: the job keeps its thread and its card keeps the button.
      expect((await h.app.store.getJob(Number(button.value)))?.phase).toBe('idle');
      expect(retryButton(h.slack.messages.find((m) => m.ts === threadTs))).toBeDefined();
    } finally {
      await h.stop();
    }
  });
});
