import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODAL_CALLBACK_ID, SHORTCUT_CALLBACK_ID } from '../../../src/blocks/send-modal.js';
import { registerShortcuts } from '../../../src/listeners/shortcuts/index.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { messageShortcut } from '../../helpers/payloads.js';

let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerShortcuts);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

describe('registerShortcuts', () => {
  it('routes the manifest’s message shortcut: acknowledged, and the modal opened with its trigger', async () => {
    const shortcut = messageShortcut({ ts: '1700000200.000200', text: 'How do I rotate keys?' });
    expect(shortcut.callback_id).toBe(SHORTCUT_CALLBACK_ID);
    const res = await app.interact(shortcut);
    expect(res.status).toBe(200);
    expect(w.slack.openView).toHaveBeenCalledOnce();
    const [trigger, view] = w.slack.openView.mock.calls[0] ?? [];
    expect(trigger).toBe(shortcut.trigger_id);
    expect(view).toMatchObject({ type: 'modal', callback_id: MODAL_CALLBACK_ID });
    expect(JSON.stringify(view)).toContain('How do I rotate keys?');
  });

  it('answers Slack before views.open has answered: the acknowledgement never waits for the modal', async () => {
    let answerOpen = () => {};
    w.slack.openView.mockImplementationOnce(
      () => new Promise<void>((resolve) => (answerOpen = () => resolve())),
    );
    const shortcut = messageShortcut({ ts: '1700000300.000300', text: 'Where are the webhook docs?' });
    const sent = app.interact(shortcut);
    // Slack waits 3 seconds; a listener that waits for views.open is not answered by then.
    const first = await Promise.race([
      sent.then(() => 'answered' as const),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 2_500)),
    ]);
    answerOpen();
    expect(first).toBe('answered');
    expect((await sent).status).toBe(200);
    expect(w.slack.openView.mock.calls.at(-1)?.[0]).toBe(shortcut.trigger_id);
  });
});
