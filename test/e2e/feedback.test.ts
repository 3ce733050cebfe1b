import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick } from '../helpers/payloads.js';
import { parseExposition } from '../helpers/prometheus.js';

const TOKEN = 'metrics-test-token-0000';
const h = useHarness({ METRICS_TOKEN: TOKEN });

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
) {
  const value = at.buttons[`${side}_button`].value;
  const click = buttonClick(
    { action_id: at.buttons.action_id, value },
    {
      channel: at.channel,
      messageTs: at.post.ts,
      user,
      responseUrl: h.slack.responseUrl(`fb-${Math.random()}`),
    },
  );
  const action = { ...click.actions[0], type: 'feedback_buttons', text: { type: 'plain_text', text: side } };
  return h.interact({ ...click, actions: [action] });
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

    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 1, negative: 1 });
    expect(await feedbackMetric('positive')).toBe(2);
    expect(await feedbackMetric('negative')).toBe(1);
    const status = (await (await h.command({ text: 'status' })).json()) as { text: string };
    expect(status.text).toContain('*Feedback on outcomes:* :thumbsup: 1  :thumbsdown: 1');
  });

  it('does not record a press whose value names another channel’s job', async () => {
    const at = await outcomeWithButtons(h);
    await press(h, { ...at, channel: 'C0ELSEWHERE' }, 'positive', 'U0BOB');
    await waitFor('told', () =>
      h.slack.responses.some((r) => String(r.body.text).includes('could not find')),
    );
    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 0, negative: 0 });
  });
});
