import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick } from '../helpers/payloads.js';
import { parseExposition } from '../helpers/prometheus.js';

const TOKEN = 'metrics-test-token-0000';
// U0MALLORY is not on the list, so her words are refused like her replies would be.
const h = useHarness({ METRICS_TOKEN: TOKEN, ALLOWED_USER_IDS: 'U0ALICE,U0BOB', MAX_PROMPT_CHARS: '200' });

type Element = { type: string; action_id: string; negative_button: { value: string } };
type Button = { type: string; action_id: string; value: string };

/** A finished job's outcome post, and its thumbs-down pressed by `user`: the private answer's button. */
async function thumbsDown(h: Harness, user: string) {
  const at = await h.startJob();
  h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/1');
  const post = await waitFor('outcome', () => h.slack.threadPosts(at.threadTs)[0]);
  const block = post.blocks?.find((b) => b.type === 'context_actions');
  const buttons = (block?.elements as Element[] | undefined)?.find((e) => e.type === 'feedback_buttons');
  if (!buttons) throw new Error('no feedback buttons on the outcome post');
  const responseUrl = h.slack.responseUrl(`down-${user}-${at.jobId}`);
  const click = buttonClick(
    { action_id: buttons.action_id, value: buttons.negative_button.value },
    { channel: at.channel, messageTs: post.ts, user, responseUrl },
  );
  const action = { ...click.actions[0], type: 'feedback_buttons' };
  expect((await h.interact({ ...click, actions: [action] })).status).toBe(200);
  const answer = await waitFor('private answer', () =>
    h.slack.responses.find((r) => responseUrl.endsWith(r.path)),
  );
  const offered = (answer.body.blocks as { type: string; elements?: Button[] }[] | undefined)
    ?.flatMap((b) => b.elements ?? [])
    .find((e) => e.action_id === 'feedback_what_to_fix');
  return { ...at, post, answer, offered };
}

/** The offered button pressed: the modal Slack was asked to open. */
async function openModal(h: Harness, at: Awaited<ReturnType<typeof thumbsDown>>, user: string) {
  if (!at.offered) throw new Error('no "what to fix" button offered');
  const before = h.slack.views.length;
  const click = buttonClick(
    { action_id: at.offered.action_id, value: at.offered.value },
    { channel: at.channel, messageTs: at.post.ts, user },
  );
  const res = await h.interact({ ...click, container: { type: 'message', is_ephemeral: true } });
  expect(res.status).toBe(200);
  return waitFor('modal opened', () => h.slack.views[before]);
}

/** The modal submitted by `user` with `text`, as Slack sends it; Slack's answer to it. */
async function submit(h: Harness, view: Record<string, unknown>, user: string, text: string, viewId: string) {
  const res = await h.interact({
    type: 'view_submission',
    team: null,
    enterprise: null,
    user: { id: user, team_id: 'T0TEST' },
    api_app_id: 'A0APP',
    token: 'legacy-verification-token',
    trigger_id: `trigger.${viewId}`,
    view: {
      ...view,
      id: viewId,
      team_id: 'T0TEST',
      state: { values: { what_to_fix: { value: { type: 'plain_text_input', value: text } } } },
    },
  });
  expect(res.status).toBe(200);
  const raw = await res.text();
  return (raw ? JSON.parse(raw) : {}) as { response_action?: string; errors?: Record<string, string> };
}

const reasonsMetric = async () => {
  const res = await fetch(`${h.base()}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return parseExposition(await res.text()).value('docs_agent_feedback_reasons_total', {}) ?? 0;
};

describe('a thumbs-down that says what to fix', () => {
  it('goes to the same job once, as a follow-up from that person, shown in the thread, kept with the vote and counted', async () => {
    const at = await thumbsDown(h, 'U0BOB');
    expect(String(at.answer.body.text)).toContain('Tell the agent what to fix');
    expect(at.answer.body).toMatchObject({ response_type: 'ephemeral' });
    const view = await openModal(h, at, 'U0BOB');
    expect(view).toMatchObject({ type: 'modal', callback_id: 'feedback_what_to_fix_modal' });

    const said = 'Use the v2 endpoint <!channel> & show *the* response';
    expect(await submit(h, view, 'U0BOB', said, 'V0FIX1')).toMatchObject({ response_action: 'update' });
    const sent = await waitFor('follow-up sent', () => h.agent.requestsFor('message')[0]);
    expect(sent).toMatchObject({ jobId: at.jobId, body: { prompt: said } });
    // The thread shows it with who sent it, inert.
    const shown = await waitFor('shown in the thread', () =>
      h.slack.threadPosts(at.threadTs).find((p) => String(p.text).includes('sent the agent a follow-up')),
    );
    expect(shown.text).toContain('<@U0BOB>');
    expect(shown.text).toContain('&lt;!channel&gt; &amp; show');
    expect(shown.text).not.toContain('<!channel>');

    // Slack delivers the same submission again: it is the same follow-up, not a second one.
    expect(await submit(h, view, 'U0BOB', said, 'V0FIX1')).toMatchObject({ response_action: 'update' });
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
    expect(h.slack.threadPosts(at.threadTs).filter((p) => p.text === shown.text)).toHaveLength(1);

    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 1 });
    expect(await reasonsMetric()).toBe(1);
    const status = (await (await h.command({ text: 'status', user_id: 'U0ALICE' })).json()) as {
      text: string;
    };
    expect(status.text).toContain(':thumbsdown: 1 (1 said what to fix)');
    expect(status.text).toContain('*What to fix, latest*');
    expect(status.text).toContain(
      '“Use the v2 endpoint &lt;!channel&gt; &amp; show *the* response” (<@U0BOB>',
    );
  });

  it('is checked as a reply would be: empty, too long and someone who may not instruct the agent are refused, and nothing is sent', async () => {
    const at = await thumbsDown(h, 'U0BOB');
    const view = await openModal(h, at, 'U0BOB');
    expect(await submit(h, view, 'U0BOB', '   ', 'V0EMPTY')).toEqual({
      response_action: 'errors',
      errors: { what_to_fix: 'Write what the agent should fix.' },
    });
    const tooLong = await submit(h, view, 'U0BOB', 'x'.repeat(201), 'V0LONG');
    expect(tooLong.errors?.what_to_fix).toContain('That is 201 characters; the limit is 200.');
    const refused = await submit(h, view, 'U0MALLORY', 'Rewrite everything', 'V0MALLORY');
    expect(refused.errors?.what_to_fix).toContain(
      'not on the list of people who may instruct the docs agent',
    );
    expect(refused.errors?.what_to_fix).toContain('Nothing was sent to the agent.');
    // A view that names an outcome of no job: told, nothing recorded.
    const forged = {
      ...view,
      private_metadata: JSON.stringify({ jobId: 999, runSeq: 1, channelId: at.channel }),
    };
    expect((await submit(h, forged, 'U0BOB', 'Fix it', 'V0FORGED')).errors?.what_to_fix).toContain(
      'could not find the outcome',
    );
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 0 });
  });

  it('a thumbs-up offers nothing more', async () => {
    const at = await h.startJob();
    h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/1');
    const post = await waitFor('outcome', () => h.slack.threadPosts(at.threadTs)[0]);
    const block = post.blocks?.find((b) => b.type === 'context_actions');
    const buttons = (
      (block?.elements ?? []) as { type: string; action_id: string; positive_button: { value: string } }[]
    )[0];
    const responseUrl = h.slack.responseUrl('up');
    const click = buttonClick(
      { action_id: buttons?.action_id ?? '', value: buttons?.positive_button.value ?? '' },
      { channel: at.channel, messageTs: post.ts, user: 'U0BOB', responseUrl },
    );
    await h.interact({ ...click, actions: [{ ...click.actions[0], type: 'feedback_buttons' }] });
    const answer = await waitFor('answered', () => h.slack.responses.find((r) => r.path === '/respond/up'));
    expect(answer.body.blocks).toBeUndefined();
    expect(String(answer.body.text)).not.toContain('what to fix');
  });
});
