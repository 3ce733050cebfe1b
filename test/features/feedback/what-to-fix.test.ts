import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WHAT_TO_FIX_ACTION_ID } from '../../../src/features/feedback/buttons.js';
import {
  openWhatToFix,
  WHAT_TO_FIX_CALLBACK_ID,
  whatToFixModal,
  whatToFixSubmission,
} from '../../../src/features/feedback/what-to-fix.js';
import { whatToFixText } from '../../../src/features/feedback/wording.js';
import type { JobRecord } from '../../../src/store/types.js';
import { viewProblems } from '../../helpers/block-kit.js';
import { guest, TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import {
  boltActionArgs,
  boltArgs,
  createListenerWorld,
  type ListenerWorld,
} from '../../helpers/listener-deps.js';

type PressArgs = Parameters<ReturnType<typeof openWhatToFix>>[0];
type SubmitArgs = Parameters<ReturnType<typeof whatToFixSubmission>>[0];

let w: ListenerWorld;
let job: JobRecord;
beforeEach(async () => {
  w = createListenerWorld({ MAX_PROMPT_CHARS: '500' });
  // The first run ended with a pull request: its outcome post carries the feedback buttons.
  job = (await w.jobWithOutcome()).job;
});
afterEach(() => w.stop());

/** The modal as the bot opened it for the job's first outcome. */
const modal = () => whatToFixModal({ jobId: job.id, runSeq: 1, channelId: CHANNEL }, 500);

/** A submission of `view` with `text`; the `ack` spy and what the store held when it was called. */
async function submit(text: string | null, fields: Record<string, unknown> = {}, view = modal()) {
  const body = {
    type: 'view_submission',
    team: { id: TEAM },
    user: { id: 'U0BOB', team_id: TEAM },
    view: {
      ...view,
      id: 'V0FIX',
      state: { values: { what_to_fix: { value: { type: 'plain_text_input', value: text } } } },
    },
    ...fields,
  };
  const runsAtAck: number[] = [];
  const ack = vi.fn(async (_answer?: unknown) => {
    runsAtAck.push((await w.store.getRuns(job.id)).length);
  });
  await whatToFixSubmission(w.deps)(boltArgs<SubmitArgs>({ body, view: body.view, ack }));
  await w.idle();
  return { ack, runsAtAck, answer: ack.mock.calls[0]?.[0] as Record<string, unknown> | undefined };
}

describe('the what-to-fix modal', () => {
  it('is one text field no longer than the instruction limit, which Slack accepts', () => {
    const view = modal();
    expect(view).toMatchObject({ type: 'modal', callback_id: WHAT_TO_FIX_CALLBACK_ID });
    expect(view.blocks[0]).toMatchObject({ block_id: 'what_to_fix', element: { max_length: 500 } });
    expect(whatToFixModal({ jobId: 1, runSeq: 1, channelId: CHANNEL }, 100_000).blocks[0]).toMatchObject({
      element: { max_length: 3_000 },
    });
    expect(JSON.parse(view.private_metadata)).toEqual({ jobId: job.id, runSeq: 1, channelId: CHANNEL });
    expect(viewProblems(view)).toEqual([]);
  });

  it('opens on a press of the offered button, after acknowledging it', async () => {
    const ack = vi.fn(async () => {
      expect(w.slack.openView).not.toHaveBeenCalled();
    });
    const body = {
      type: 'block_actions',
      team: null,
      user: { id: 'W0GRID', team_id: TEAM },
      channel: { id: CHANNEL },
      trigger_id: 'trigger.1',
      actions: [{ type: 'button', action_id: WHAT_TO_FIX_ACTION_ID, value: `${job.id}:1` }],
    };
    await openWhatToFix(w.deps)(boltActionArgs<PressArgs>(body, ack));
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.openView).toHaveBeenCalledWith('trigger.1', modal());
  });

  it.each([
    ['a value this app did not make', { value: `${'0'}:1` }],
    ['a value naming no outcome', { value: 'positive:1:1' }],
  ])('a press with %s is acknowledged, logged and opens nothing', async (_what, action) => {
    const ack = vi.fn(async () => {});
    const body = {
      user: { id: 'U0BOB' },
      channel: { id: CHANNEL },
      trigger_id: 'trigger.2',
      actions: [{ action_id: WHAT_TO_FIX_ACTION_ID, ...action }],
    };
    await openWhatToFix(w.deps)(boltActionArgs<PressArgs>(body, ack));
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.openView).not.toHaveBeenCalled();
    expect(w.logged('warn', 'what-to-fix press not understood')).toHaveLength(1);
  });
});

describe('a what-to-fix submission', () => {
  it('records the reason with the vote and the follow-up before answering, then sends it to the job', async () => {
    const { answer, runsAtAck } = await submit('  The table is wrong <here>  ');
    expect(runsAtAck).toEqual([2]);
    expect(answer).toMatchObject({ response_action: 'update' });
    expect(await w.store.feedbackReasons(5)).toMatchObject([
      { jobId: job.id, runSeq: 1, userId: 'U0BOB', reason: 'The table is wrong <here>' },
    ]);
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 1 });
    const [, followUp] = await w.store.getRuns(job.id);
    expect(followUp).toMatchObject({
      kind: 'follow_up',
      authorId: 'U0BOB',
      runKey: 'modal:V0FIX',
      prompt: 'The table is wrong <here>',
    });
    // The same submission again: one reason, one follow-up.
    await submit('  The table is wrong <here>  ');
    expect(await w.store.getRuns(job.id)).toHaveLength(2);
  });

  it('an Enterprise Grid member’s words count as their own, read from `user.team_id`', async () => {
    await submit('Fix it', { team: null, user: { id: 'W0GRID', team_id: TEAM } });
    expect((await w.store.getRuns(job.id))[1]).toMatchObject({ authorId: 'W0GRID', teamId: TEAM });
  });

  it.each([
    ['nothing written', null, whatToFixText.empty()],
    ['only spaces', '   ', whatToFixText.empty()],
    ['over the limit', 'x'.repeat(501), whatToFixText.tooLong(501, 500)],
  ])('%s: answered under the input, nothing recorded', async (_what, text, error) => {
    const { answer } = await submit(text);
    expect(answer).toEqual({ response_action: 'errors', errors: { what_to_fix: error } });
    expect(await w.store.getRuns(job.id)).toHaveLength(1);
  });

  it('a guest’s words are refused under the input, and neither kept nor sent', async () => {
    w.slack.userInfo.mockResolvedValue(guest());
    const { answer } = await submit('Rewrite it');
    expect(answer).toEqual({
      response_action: 'errors',
      errors: { what_to_fix: whatToFixText.notCounted('guest') },
    });
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(await w.store.getRuns(job.id)).toHaveLength(1);
  });

  it.each([
    ['an outcome of another channel', { jobId: 1, runSeq: 1, channelId: 'C0OTHER' }, whatToFixText.unknown()],
    ['a run with no outcome', { jobId: 1, runSeq: 2, channelId: CHANNEL }, whatToFixText.unknown()],
    ['metadata this app did not write', { jobId: 'one' }, whatToFixText.notUnderstood()],
  ])('a modal naming %s is answered under the input', async (_what, metadata, error) => {
    const view = {
      ...modal(),
      private_metadata: JSON.stringify({
        ...metadata,
        jobId: metadata.jobId === 1 ? job.id : metadata.jobId,
      }),
    };
    const { answer } = await submit('Fix it', {}, view);
    expect(answer).toEqual({ response_action: 'errors', errors: { what_to_fix: error } });
    expect(await w.store.getRuns(job.id)).toHaveLength(1);
  });

  it('when the store cannot record it: answered under the input, logged', async () => {
    vi.spyOn(w.deps.store, 'recordFeedbackReason').mockRejectedValueOnce(new Error('disk I/O error'));
    const { answer } = await submit('Fix it');
    expect(answer).toEqual({
      response_action: 'errors',
      errors: { what_to_fix: whatToFixText.notRecorded() },
    });
    expect(w.logged('error', 'could not record what to fix')).toHaveLength(1);
  });
});
