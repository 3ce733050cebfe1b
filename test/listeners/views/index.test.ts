import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCK, INPUT_ACTION, MODAL_CALLBACK_ID } from '../../../src/blocks/send-modal.js';
import { registerViews } from '../../../src/listeners/views/index.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerViews);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

/** The send-to-agent modal submitted by `user`, as Slack sends it. */
function submission(user: string, viewId: string, instruction: string) {
  const input = (value: Record<string, unknown>) => ({ [INPUT_ACTION]: value });
  return {
    type: 'view_submission',
    team: { id: TEAM },
    user: { id: user, team_id: TEAM },
    api_app_id: 'A0APP',
    trigger_id: `trigger.${viewId}`,
    view: {
      id: viewId,
      type: 'modal',
      callback_id: MODAL_CALLBACK_ID,
      team_id: TEAM,
      private_metadata: JSON.stringify({ channel: CHANNEL, ts: '1700000200.000200', author: 'U0AUTHOR' }),
      state: {
        values: {
          [BLOCK.instruction]: input({ type: 'plain_text_input', value: instruction }),
          [BLOCK.message]: input({ type: 'plain_text_input', value: 'How do I rotate keys?' }),
          [BLOCK.channel]: input({ type: 'conversations_select', selected_conversation: CHANNEL }),
        },
      },
    },
  };
}

describe('registerViews', () => {
  it('routes the modal’s submission: the job is recorded before the receiver closes the modal', async () => {
    const res = await app.interact(submission('U0ALICE', 'V0SUBMIT1', 'Write a guide'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(await w.store.recentJobs({ requesterId: 'U0ALICE' }, 5)).toEqual([
      expect.objectContaining({ origin: 'shortcut', instruction: 'Write a guide' }),
    ]);
    await w.idle();
  });

  it('a submission it refuses is answered inside the modal, through the receiver', async () => {
    const res = await app.interact(submission('U0BOB', 'V0SUBMIT2', '   '));
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { response_action: string; errors: Record<string, string> };
    expect(answer.response_action).toBe('errors');
    expect(answer.errors[BLOCK.instruction]).toContain('Write what the docs agent should do');
    expect(await w.store.recentJobs({ requesterId: 'U0BOB' }, 5)).toEqual([]);
  });
});
