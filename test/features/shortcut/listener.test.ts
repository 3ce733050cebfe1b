import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sendToDocsAgent } from '../../../src/features/shortcut/listener.js';
import { SlackCallError } from '../../../src/slack/caller.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import {
  boltArgs,
  boltExtras,
  createListenerWorld,
  type ListenerWorld,
} from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof sendToDocsAgent>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for the message shortcut; returns its `ack`. */
async function shortcut(fields: Record<string, unknown> = {}, message: Record<string, unknown> = {}) {
  const payload = {
    type: 'message_action',
    callback_id: 'send_to_docs_agent',
    trigger_id: 'trigger-test-2',
    team: { id: TEAM, domain: 'example-test' },
    user: { id: REQUESTER },
    channel: { id: CHANNEL },
    message: { ts: '1700000200.000200', text: 'How do I rotate keys?', user: 'U0AUTHOR', ...message },
    ...fields,
  };
  const ack = vi.fn(async () => {});
  await sendToDocsAgent(w.deps)(boltArgs<Args>({ shortcut: payload, body: payload, payload, ack }));
  return ack;
}
const openedView = () => {
  expect(w.slack.openView).toHaveBeenCalledOnce();
  const [trigger, view] = w.slack.openView.mock.calls[0] ?? [];
  return { trigger, view: view as { private_metadata: string }, text: JSON.stringify(view) };
};

describe('Send to docs agent (message shortcut)', () => {
  it('acknowledges and opens the modal, prefilled with the message and its link', async () => {
    const ack = await shortcut();
    expect(ack).toHaveBeenCalledOnce();
    const { trigger, view, text } = openedView();
    expect(trigger).toBe('trigger-test-2');
    expect(text).toContain('How do I rotate keys?');
    expect(JSON.parse(view.private_metadata)).toEqual({
      channel: CHANNEL,
      ts: '1700000200.000200',
      author: 'U0AUTHOR',
      permalink: `https://example-test.slack.com/archives/${CHANNEL}/p1700000200000200`,
    });
    // Opening the modal records nothing: the submission does.
    expect(w.jobCount()).toBe(0);
  });

  it('remembers the thread of a message inside one', async () => {
    await shortcut({}, { thread_ts: '1700000000.000050' });
    expect(JSON.parse(openedView().view.private_metadata)).toMatchObject({ threadTs: '1700000000.000050' });
  });

  it('names an app’s message by its name', async () => {
    await shortcut({}, { user: undefined, bot_id: 'B0OTHERAPP', username: 'Deploy Bot' });
    expect(JSON.parse(openedView().view.private_metadata)).toMatchObject({ author: 'Deploy Bot' });
  });

  it('acknowledges a payload it cannot read, logs it, and opens nothing', async () => {
    const ack = await shortcut({ channel: undefined, trigger_id: '' });
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.openView).not.toHaveBeenCalled();
    const [line] = w.logged('warn', 'message shortcut payload not understood');
    expect(line).toContain('channel');
  });

  it('logs a modal Slack would not open, without failing the acknowledgement', async () => {
    w.slack.openView.mockRejectedValueOnce(
      new SlackCallError('views.open', 'expired_trigger_id', { platform: true }),
    );
    const ack = await shortcut();
    expect(ack).toHaveBeenCalledOnce();
    await vi.waitFor(() =>
      expect(w.logged('warn', 'could not open the send-to-agent modal')).toHaveLength(1),
    );
  });

  it('returns (so the receiver answers Slack) while views.open is still waiting for Slack', async () => {
    let answer = () => {};
    w.slack.openView.mockImplementationOnce(() => new Promise<void>((resolve) => (answer = resolve)));
    let returned = false;
    const running = shortcut().then((ack) => {
      returned = true;
      return ack;
    });
    await vi.waitFor(() => expect(returned).toBe(true));
    expect(w.slack.openView).toHaveBeenCalledOnce();
    answer();
    expect(await running).toHaveBeenCalledOnce();
  });

  it('acknowledges before opening the modal (the trigger lives 3 seconds)', async () => {
    const order: string[] = [];
    w.slack.openView.mockImplementationOnce(async () => {
      order.push('open');
    });
    const ack = vi.fn(async () => {
      order.push('ack');
    });
    const payload = {
      type: 'message_action',
      trigger_id: 'trigger-test-3',
      user: { id: REQUESTER },
      channel: { id: CHANNEL },
      message: { ts: '1700000200.000200', text: 'x' },
    };
    await sendToDocsAgent(w.deps)({
      shortcut: payload,
      body: payload,
      ack,
      ...boltExtras(),
    } as unknown as Args);
    expect(order).toEqual(['ack', 'open']);
  });
});
