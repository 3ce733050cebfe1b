import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FEEDBACK_ACTION_ID, whatToFixButton } from '../../../src/features/feedback/buttons.js';
import { outcomeFeedback } from '../../../src/features/feedback/listener.js';
import { feedbackText } from '../../../src/features/feedback/wording.js';
import type { JobRecord } from '../../../src/store/types.js';
import { blockProblems } from '../../helpers/block-kit.js';
import { guest, TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltActionArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof outcomeFeedback>>[0];

const RESPONSE_URL = 'https://hooks.slack.com/actions/T0TEST/1/feedback';
let w: ListenerWorld;
let job: JobRecord;
beforeEach(async () => {
  w = createListenerWorld();
  // The first run ended with a pull request: its outcome post carries the feedback buttons.
  job = (await w.jobWithOutcome()).job;
});
afterEach(() => w.stop());

/** A press of `feedback_buttons` (a `block_actions` payload, as Slack sends it); the `ack` spy and when it came. */
async function press(value: string, fields: Record<string, unknown> = {}) {
  const body = {
    type: 'block_actions',
    team: { id: TEAM },
    user: { id: 'U0BOB', team_id: TEAM },
    channel: { id: CHANNEL },
    container: { type: 'message', message_ts: '1700000000.000900', channel_id: CHANNEL },
    response_url: RESPONSE_URL,
    actions: [{ type: 'feedback_buttons', action_id: FEEDBACK_ACTION_ID, value }],
    ...fields,
  };
  const totalsAtAck: unknown[] = [];
  const ack = vi.fn(async () => {
    totalsAtAck.push(await w.store.feedbackTotals());
  });
  await outcomeFeedback(w.deps)(boltActionArgs<Args>(body, ack));
  await w.idle();
  return { ack, totalsAtAck };
}

describe('feedback on an outcome', () => {
  it('records the vote before acknowledging the press, and thanks the person privately', async () => {
    const { ack, totalsAtAck } = await press(`positive:${job.id}:1`);
    expect(ack).toHaveBeenCalledOnce();
    expect(totalsAtAck).toEqual([{ positive: 1, negative: 0, reasons: 0 }]);
    expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.recorded('positive'));
  });

  it('the same vote again is not counted twice; the other one changes it', async () => {
    await press(`positive:${job.id}:1`);
    await press(`positive:${job.id}:1`);
    expect(w.slack.respond).toHaveBeenLastCalledWith(RESPONSE_URL, feedbackText.unchanged('positive'));
    await press(`negative:${job.id}:1`);
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 0 });
  });

  it('an Enterprise Grid member’s vote counts as their own', async () => {
    await press(`positive:${job.id}:1`);
    await press(`positive:${job.id}:1`, { user: { id: 'W0GRIDUSER' }, team: null });
    expect(await w.store.feedbackTotals()).toEqual({ positive: 2, negative: 0, reasons: 0 });
  });

  it('reads the person’s workspace from `user.team_id` when an organisation-wide install sends `"team": null`', async () => {
    await press(`positive:${job.id}:1`, {
      team: null,
      enterprise: { id: 'E0GRID', name: 'Grid' },
      is_enterprise_install: true,
      user: { id: 'W0EVE', team_id: 'T0OTHER' },
    });
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.notCounted('team'));
  });

  it.each([
    [
      'from another workspace (`team.id` differs)',
      { team: { id: 'T0OTHER' }, user: { id: 'U0EVE' } },
      'team',
    ],
    [
      'by a person of another organisation in a shared channel (`user.team_id` differs)',
      { user: { id: 'U0EXT', team_id: 'T0OTHERORG' } },
      'team',
    ],
  ] as const)(
    'a press %s is acknowledged, not counted, and the person told why',
    async (_what, fields, reason) => {
      const { ack } = await press(`positive:${job.id}:1`, fields);
      expect(ack).toHaveBeenCalledOnce();
      expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
      expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.notCounted(reason));
      expect(w.slack.userInfo).not.toHaveBeenCalled();
    },
  );

  it('a guest’s press is not counted, and they are told why', async () => {
    w.slack.userInfo.mockResolvedValue(guest());
    await press(`positive:${job.id}:1`);
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.notCounted('guest'));
  });

  it('without a response_url: answered with a private message in the channel', async () => {
    await press(`positive:${job.id}:1`, { response_url: undefined });
    expect(w.slack.postEphemeral).toHaveBeenCalledWith({
      channel: CHANNEL,
      user: 'U0BOB',
      text: feedbackText.recorded('positive'),
    });
  });

  it('a thumbs-down’s answer offers to tell the agent what to fix, naming the outcome', async () => {
    await press(`negative:${job.id}:1`);
    const [url, text, blocks] = w.slack.respond.mock.calls[0] ?? [];
    expect(url).toBe(RESPONSE_URL);
    expect(text).toContain(feedbackText.recorded('negative'));
    expect(text).toContain(feedbackText.offerWhatToFix());
    expect(blocks?.[1]).toEqual(whatToFixButton({ jobId: job.id, runSeq: 1 }));
    expect(blockProblems(blocks, 50)).toEqual([]);
    // Pressed again, the answer offers it again; a press that does not count offers nothing.
    await press(`negative:${job.id}:1`);
    expect(w.slack.respond.mock.calls[1]?.[2]?.[1]).toEqual(whatToFixButton({ jobId: job.id, runSeq: 1 }));
    await press(`negative:${job.id}:1`, { team: { id: 'T0OTHER' }, user: { id: 'U0EVE' } });
    expect(w.slack.respond).toHaveBeenLastCalledWith(RESPONSE_URL, feedbackText.notCounted('team'));
    // Without a response_url, the private message in the channel carries the offer.
    await press(`negative:${job.id}:1`, { response_url: undefined });
    expect(w.slack.postEphemeral.mock.calls[0]?.[0]).toMatchObject({ channel: CHANNEL, user: 'U0BOB' });
    expect(w.slack.postEphemeral.mock.calls[0]?.[0].blocks?.[1]).toEqual(
      whatToFixButton({ jobId: job.id, runSeq: 1 }),
    );
  });

  it.each([
    ['an outcome that does not exist', () => `positive:${job.id}:7`, {}],
    ['a job that does not exist', () => 'positive:999:1', {}],
    [
      'a press from another channel than the job’s',
      () => `positive:${job.id}:1`,
      { channel: { id: 'C0OTHER' } },
    ],
  ])('%s: nothing recorded, and the person is told so', async (_what, value, fields) => {
    await press(value(), fields);
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.unknown());
  });

  it.each([
    [
      'a value this app did not make',
      { actions: [{ type: 'feedback_buttons', value: 'positive:0:1' }] },
      'actions.0.value',
    ],
    ['an action of another type', { actions: [{ type: 'button', value: 'positive:1:1' }] }, 'actions.0.type'],
    ['no actions', { actions: [] }, 'actions'],
    ['no channel', { channel: undefined }, 'channel'],
    ['a user that is not an object', { user: 'U0BOB' }, 'user'],
    ['a user that is not a user id', { user: { id: '<!channel>', team_id: 'T0TEST' } }, 'user.id'],
    ['a response_url that is not a URL', { response_url: 'not a url' }, 'response_url'],
  ])('a press with %s is acknowledged, logged, and records nothing', async (_what, fields, issue) => {
    const { ack } = await press(`positive:${job.id}:1`, fields);
    expect(ack).toHaveBeenCalledOnce();
    expect(await w.store.feedbackTotals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(JSON.parse(w.logged('warn', 'feedback press not understood')[0] as string).issues).toEqual([
      issue,
    ]);
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('when the store cannot record it: acknowledged, and the person asked to press again', async () => {
    vi.spyOn(w.deps.store, 'recordFeedback').mockRejectedValueOnce(new Error('disk I/O error'));
    const { ack } = await press(`positive:${job.id}:1`);
    expect(ack).toHaveBeenCalledOnce();
    expect(w.slack.respond).toHaveBeenCalledWith(RESPONSE_URL, feedbackText.notRecorded());
    expect(w.logged('error', 'could not record feedback')).toHaveLength(1);
  });
});
