import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick } from '../helpers/payloads.js';
import { parseExposition } from '../helpers/prometheus.js';

const TOKEN = 'metrics-test-token-0000';
// Everyone who votes here is on the list but U0MALLORY, so each refusal below has its own reason.
const h = useHarness({
  METRICS_TOKEN: TOKEN,
  ALLOWED_USER_IDS: 'U0ALICE,U0BOB,U0EVE,U0EXT,U0GUEST',
  MAX_PROMPT_CHARS: '200',
});

type Element = {
  type: string;
  action_id: string;
  positive_button: { value: string };
  negative_button: { value: string };
};

/** A finished job's outcome post and its feedback buttons, as Slack would show them. */
async function outcomeWithButtons(h: Harness) {
  const at = await h.startJob();
  h.agent.complete(at.jobId, 'https://github.com/example/docs/pull/1');
  const post = await waitFor('outcome', () => h.slack.threadPosts(at.threadTs)[0]);
  const block = post.blocks?.find((b) => b.type === 'context_actions');
  const buttons = (block?.elements as Element[] | undefined)?.find((e) => e.type === 'feedback_buttons');
  if (!buttons) throw new Error('no feedback buttons on the outcome post');
  return { ...at, post, buttons };
}

/** A press of one of the two buttons, as Slack sends it (`block_actions` with a `feedback_buttons` action). */
function press(
  h: Harness,
  at: { channel: string; post: { ts: string }; buttons: Element },
  side: 'positive' | 'negative',
  user: string,
  /** Fields of the payload as Slack would send them from elsewhere (`team`, `user`). */
  fields: Record<string, unknown> = {},
  responseUrl = h.slack.responseUrl(`fb-${Math.random()}`),
) {
  const value = at.buttons[`${side}_button`].value;
  const click = buttonClick(
    { action_id: at.buttons.action_id, value },
    { channel: at.channel, messageTs: at.post.ts, user, responseUrl },
  );
  const action = { ...click.actions[0], type: 'feedback_buttons', text: { type: 'plain_text', text: side } };
  return h.interact({ ...click, ...fields, actions: [action] });
}

const feedbackMetric = async (value: string) => {
  const res = await fetch(`${h.base()}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return parseExposition(await res.text()).value('docs_agent_feedback_total', { value }) ?? 0;
};

describe('feedback on outcome posts', () => {
  it('records one vote per person and outcome, acknowledges it privately, counts it and shows it in status', async () => {
    const at = await outcomeWithButtons(h);
    expect(await feedbackMetric('positive')).toBe(0);

    expect((await press(h, at, 'positive', 'U0BOB')).status).toBe(200);
    await waitFor('acknowledged privately', () =>
      h.slack.responses.some((r) => String(r.body.text).includes('feedback on this outcome is recorded')),
    );
    for (const r of h.slack.responses) expect(r.body).toMatchObject({ response_type: 'ephemeral' });
    await press(h, at, 'positive', 'U0BOB');
    await waitFor('repeat acknowledged', () =>
      h.slack.responses.some((r) => String(r.body.text).includes('already recorded')),
    );
    // A second press of the other button changes the vote; another person's vote is their own.
    await press(h, at, 'negative', 'U0BOB');
    await press(h, at, 'positive', 'U0ALICE');
    await waitFor('all answered', () => h.slack.responses.length === 4);

    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 1, negative: 1, reasons: 0 });
    expect(await feedbackMetric('positive')).toBe(2);
    expect(await feedbackMetric('negative')).toBe(1);
    const status = (await (await h.command({ text: 'status' })).json()) as { text: string };
    expect(status.text).toContain('Feedback on outcomes: :thumbsup: 1  :thumbsdown: 1 (0 said what to fix)');
  });

  it('does not record a press whose value names another channel’s job', async () => {
    const at = await outcomeWithButtons(h);
    await press(h, { ...at, channel: 'C0ELSEWHERE' }, 'positive', 'U0BOB');
    await waitFor('told', () =>
      h.slack.responses.some((r) => String(r.body.text).includes('could not find')),
    );
    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
  });
});

describe('who may vote on an outcome', () => {
  it('counts no press of someone who may not instruct the agent there, and tells each why, privately', async () => {
    const at = await outcomeWithButtons(h);
    h.slack.externalMembers.set('U0EXT', 'T0EXTORG');
    h.slack.guests.add('U0GUEST');
    const presses = [
      // Another workspace: Slack names it in `team` (this press carries no `user.team_id`).
      ['other-workspace', 'U0EVE', { team: { id: 'T0OTHER', domain: 'other' }, user: { id: 'U0EVE' } }],
      // A person of another organisation in a shared channel: the request is this workspace's.
      ['other-org', 'U0EXT', { user: { id: 'U0EXT', username: 'ext', team_id: 'T0EXTORG' } }],
      ['guest', 'U0GUEST', {}],
      ['not-listed', 'U0MALLORY', {}],
    ] as const;
    for (const [id, user, fields] of presses) {
      const res = await press(h, at, 'positive', user, fields, h.slack.responseUrl(id));
      expect(res.status).toBe(200);
    }
    const told = async (id: string) =>
      String((await waitFor(id, () => h.slack.responses.find((r) => r.path === `/respond/${id}`))).body.text);
    expect(await told('other-workspace')).toContain(
      'serves another Slack workspace or organisation, so your feedback was not counted',
    );
    expect(await told('other-org')).toContain(
      'serves another Slack workspace or organisation, so your feedback was not counted',
    );
    expect(await told('guest')).toContain(
      'Guest accounts cannot instruct the docs agent, nor rate its outcomes',
    );
    expect(await told('not-listed')).toContain('not on the list of people who may instruct the docs agent');
    for (const r of h.slack.responses) expect(r.body).toMatchObject({ response_type: 'ephemeral' });

    await h.settled();
    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(await feedbackMetric('positive')).toBe(0);
    const status = (await (await h.command({ text: 'status' })).json()) as { text: string };
    expect(status.text).toContain('Feedback on outcomes: :thumbsup: 0  :thumbsdown: 0 (0 said what to fix)');
    // A person who may vote still can.
    await press(h, at, 'positive', 'U0BOB', {}, h.slack.responseUrl('bob'));
    expect(await told('bob')).toContain('feedback on this outcome is recorded');
    expect(await feedbackMetric('positive')).toBe(1);
  });
});

type Button = { type: string; action_id: string; value: string };

/** A finished job's outcome post, and its thumbs-down pressed by `user`: the private answer and its offer. */
async function thumbsDown(h: Harness, user: string) {
  const at = await outcomeWithButtons(h);
  const responseUrl = h.slack.responseUrl(`down-${user}-${at.jobId}`);
  expect((await press(h, at, 'negative', user, {}, responseUrl)).status).toBe(200);
  const answer = await waitFor('private answer', () =>
    h.slack.responses.find((r) => responseUrl.endsWith(r.path)),
  );
  const offered = (answer.body.blocks as { type: string; elements?: Button[] }[] | undefined)
    ?.flatMap((b) => b.elements ?? [])
    .find((e) => e.action_id === 'feedback_what_to_fix');
  return { ...at, answer, offered };
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
    const at = await outcomeWithButtons(h);
    await press(h, at, 'positive', 'U0BOB', {}, h.slack.responseUrl('up'));
    const answer = await waitFor('answered', () => h.slack.responses.find((r) => r.path === '/respond/up'));
    expect(answer.body.blocks).toBeUndefined();
    expect(String(answer.body.text)).not.toContain('what to fix');
  });
});
