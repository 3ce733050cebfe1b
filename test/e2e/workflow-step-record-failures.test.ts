import { afterEach, describe, expect, it } from 'vitest';
import { START_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { stepText } from '../../src/features/workflow-steps/wording.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { eventEnvelope } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';
import { functionExecuted, userContext } from '../helpers/workflow-steps.js';

let h: Harness;
afterEach(async () => {
  await h.stop();
});

const STEP_TOKEN = 'xwfp-0000000000-test-record-token';

describe('a workflow step the store cannot record', () => {
  it('is answered with an error so Slack sends it again, and failed at once on its last delivery', async () => {
    h = await startHarness();
    h.slack.steps.functionTokens.set(STEP_TOKEN, 'Fx0LOST');
    await h.app.store.close();
    const event = functionExecuted({
      callbackId: START_STEP_CALLBACK_ID,
      executionId: 'Fx0LOST',
      inputs: {
        instruction: 'Document the export API',
        channel_id: 'C0DOCS',
        user_context: userContext('U0ALICE'),
      },
      token: STEP_TOKEN,
    });
    const send = (retry: number) =>
      postSigned(h.base(), eventEnvelope(event, { event_id: 'EvLOST' }), {
        contentType: 'application/json',
        ...(retry
          ? { headers: { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'timeout' } }
          : {}),
      });
    expect((await send(0)).status).toBe(500);
    expect(h.slack.steps.completionsOf('Fx0LOST')).toEqual([]);
    // Slack's last re-delivery: none will come after it, so the step fails now, never hangs.
    await send(3);
    const answer = await waitFor('the step failed', () => h.slack.steps.completionsOf('Fx0LOST')[0]);
    expect(answer).toMatchObject({
      method: 'functions.completeError',
      token: 'function',
      error: stepText.notRecorded(),
    });
  });
});
