import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

const h = useHarness();

type Block = {
  type: string;
  text?: { text: string };
  fields?: { text: string }[];
  elements?: Record<string, unknown>[];
};
const blocksOf = (m: { blocks?: Record<string, unknown>[] } | undefined) => (m?.blocks ?? []) as Block[];
const fieldText = (m: { blocks?: Record<string, unknown>[] } | undefined) =>
  blocksOf(m)
    .flatMap((b) => b.fields ?? [])
    .map((f) => f.text)
    .join('\n');
const buttons = (m: { blocks?: Record<string, unknown>[] } | undefined) =>
  blocksOf(m)
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);

describe('the status card', () => {
  it('shows status, runs, repository, branch, model and job, and gains a pull request button', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    const root = () => h.slack.messages.find((m) => m.ts === threadTs);
    await waitFor('card shows the running job', () => fieldText(root()).includes('Working'));
    const fields = fieldText(root());
    expect(fields).toContain('*Runs*\n1');
    expect(fields).toContain('`https://github.com/example/docs` on `docs-agent/job-1`');
    expect(fields).toContain('*Model*\n`sonnet`');
    expect(fields).toContain(`*Job*\n\`${jobId}\``);
    expect(fields).toMatch(/\*Elapsed\*\n\d+ seconds? as of <!date\^\d+\^\{time\}\|\d\d:\d\d UTC>/);
    expect(buttons(root())).toEqual([]);
    expect(root()?.text).toContain('Working');
    // Slack shows the thread's session working; the card, the thread's root, carries no emoji.
    await waitFor('working session', () => h.slack.sessionOf(channel, threadTs)?.status === 'processing');
    expect(h.slack.reactionsOn(channel, threadTs)).toEqual([]);

    h.agent.complete(jobId, 'https://github.com/example/docs/pull/3');
    await waitFor('card shows the pull request', () => buttons(root()).length === 1);
    expect(buttons(root())[0]).toMatchObject({
      type: 'button',
      url: 'https://github.com/example/docs/pull/3',
      text: { type: 'plain_text', text: 'View pull request' },
    });
    await waitFor('card shows done', () => fieldText(root()).includes(':white_check_mark: Done'));
    await waitFor(
      'session waits for a follow-up',
      () => h.slack.sessionOf(channel, threadTs)?.status === 'active',
    );
    await h.settled();
    // A command's card is its thread's root and shows the state itself: no emoji call for it.
    expect(h.slack.reactionsOn(channel, threadTs)).toEqual([]);
    expect(h.slack.callsTo('reactions.add')).toEqual([]);
    expect(h.slack.callsTo('reactions.remove')).toEqual([]);
  });

  it('posts the outcome in Block Kit with the same words as its text fallback', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/9');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('<https://github.com/example/docs/pull/9|Review the pull request>');
    const [section, actions] = blocksOf(post);
    expect(section?.text?.text).toBe(post.text);
    expect(actions?.elements?.[0]).toMatchObject({ url: 'https://github.com/example/docs/pull/9' });
  });

  it('shows a failed job as failed, with no emoji on the card, and only a "Try again" button', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'failed');
    const failed = () => fieldText(h.slack.messages.find((m) => m.ts === threadTs)).includes(':x: Failed');
    await waitFor('card shows failed', failed);
    await h.settled();
    const root = h.slack.messages.find((m) => m.ts === threadTs);
    expect(h.slack.reactionsOn(channel, threadTs)).toEqual([]);
    expect(h.slack.callsTo('reactions.add')).toEqual([]);
    const job = await h.app.store.findJobByThread(channel, threadTs);
    expect(buttons(root)).toEqual([
      {
        type: 'button',
        text: expect.objectContaining({ text: 'Try again' }),
        action_id: 'retry_job',
        value: String(job?.id),
      },
    ]);
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    // Its text, and the feedback buttons every outcome has: no pull request button.
    expect(blocksOf(post).map((b) => b.type)).toEqual(['section', 'context_actions']);
  });

  it('shortens a long instruction on the card, its link shown inert and never cut into markup', async () => {
    const link = '<https://docs.example.com/a-very-long-page-name|the page>';
    const text = `${'word '.repeat(400)}${link} ${'tail '.repeat(600)}`;
    await h.command({ text });
    const root = await waitFor('root message', () => h.slack.messages.find((m) => !m.thread_ts));
    const quoted = blocksOf(root)[0]?.text?.text ?? '';
    expect(quoted.length).toBeLessThanOrEqual(3_000);
    expect(quoted.endsWith('…')).toBe(true);
    // The person's link is quoted as its label and address, never as a link the bot posts.
    expect(quoted).not.toContain('<https://docs.example.com');
    expect(quoted).toContain('the page (https://docs.example.com/a-very-long-page-name)');
    expect(quoted).toMatch(/ (t|ta|tai|tail)…$/);
    expect(root?.text.length).toBeLessThanOrEqual(4_000);
  });
});
