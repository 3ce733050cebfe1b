import { WebClient } from '@slack/web-api';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSessionSync, SESSION_TITLE_CHARS } from '../../src/delivery/sessions.js';
import { createAgentSessions } from '../../src/slack/agent-sessions.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';
import { BOT_TOKEN } from '../helpers/slack-stand-in.js';

const ROOT = '1700000000.000100';

const w = useDeliveryWorld();
let sync: ReturnType<typeof createSessionSync>;
beforeEach(async () => {
  const client = new WebClient(BOT_TOKEN, {
    slackApiUrl: w.slack.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
  // Its own warnings per reason: one sync per test, as one per process.
  sync = createSessionSync({
    sessions: createAgentSessions(createSlackCaller({ client, logger: w.logger, redact: (text) => text })),
    logger: w.logger,
  });
});

const session = () => w.slack.sessionOf('C0DOCS', ROOT);

describe('a job’s thread as an agent session', () => {
  it('is made when the agent works on the job: processing, titled by the instruction, for the requester', async () => {
    await sync(await w.job({ phase: 'active', threadTs: ROOT, runCount: 1 }));
    expect(session()).toMatchObject({
      status: 'processing',
      title: 'Document the retry settings',
      initiator: 'U0ALICE',
    });
  });

  it('follows the job: waiting for a follow-up, working again, then closed', async () => {
    const job = await w.job({ phase: 'active', threadTs: ROOT, runCount: 1 });
    await sync(job);
    await sync({ ...job, phase: 'idle', lastOutcome: 'completed_pr' });
    await sync({ ...job, phase: 'active', runCount: 2 });
    await sync({ ...job, phase: 'idle', runCount: 2, lastOutcome: 'archived' });
    expect(session()?.history).toEqual(['processing', 'active', 'processing', 'closed']);
  });

  it('shows a run someone pressed stop on as no longer processing', async () => {
    await sync(await w.job({ phase: 'active', threadTs: ROOT, runCount: 2, stoppedRun: 2 }));
    expect(session()?.status).toBe('active');
  });

  it('is closed for a job that cannot go on', async () => {
    await sync(await w.job({ phase: 'gone', threadTs: ROOT, runCount: 1 }));
    expect(session()?.status).toBe('closed');
  });

  it('is not made for a job without its own thread', async () => {
    await sync(await w.job({ phase: 'active', threadTs: null }));
    await sync(await w.job({ phase: 'retried', threadTs: ROOT }));
    expect(w.slack.callsTo('agents.sessions.setStatus')).toEqual([]);
  });

  it('has a one-line title cut to fit Slack’s list, and none once the words are erased', async () => {
    const long = `Document\n\nthe retry settings ${'and more '.repeat(20)}`;
    const job = await w.job({ phase: 'active', threadTs: ROOT, instruction: long });
    await sync(job);
    const title = session()?.title ?? '';
    expect([...title].length).toBeLessThanOrEqual(SESSION_TITLE_CHARS);
    expect(title).toMatch(/^Document the retry settings and more/);
    expect(title).not.toContain('\n');

    await sync({ ...job, threadTs: '1700000000.000200', erasedAt: w.clock.at });
    expect(w.slack.sessionOf('C0DOCS', '1700000000.000200')?.title).toBeUndefined();
  });

  it('fails the card update when Slack may take it later, so it is tried again', async () => {
    const job = await w.job({ phase: 'active', threadTs: ROOT });
    w.slack.fail('agents.sessions.setStatus', { error: 'ratelimited' }, { error: 'internal_error' });
    w.slack.fail('agents.sessions.setStatus', { status: 503 });
    for (const code of ['ratelimited', 'internal_error', 'http_503'])
      await expect(sync(job)).rejects.toMatchObject({ name: 'SlackCallError', code });
    await sync(job);
    expect(session()?.status).toBe('processing');
    expect(w.logged('cards go on without it')).toEqual([]);
  });

  it('lets the card go on when Slack will refuse it again, warning once per reason', async () => {
    const [first, second] = [
      await w.job({ phase: 'active', threadTs: ROOT }),
      await w.job({ phase: 'active', threadTs: '1.2' }),
    ];
    w.slack.fail(
      'agents.sessions.setStatus',
      { error: 'not_allowed_token_type' },
      { error: 'not_allowed_token_type' },
      { error: 'invalid_arguments' },
    );
    await expect(sync(first)).resolves.toBeUndefined();
    await expect(sync(second)).resolves.toBeUndefined();
    await expect(sync(first)).resolves.toBeUndefined();
    const warned = w.logged('cards go on without it');
    expect(warned).toHaveLength(2);
    expect(warned[0]).toContain('not_allowed_token_type');
    expect(warned[1]).toContain('invalid_arguments');
    expect(w.slack.sessions.size).toBe(0);
    // Refusals of the session itself are not asked again without the initiator.
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(3);
  });

  it('is made without an initiator for a requester who is not a member of the channel, and stays so', async () => {
    // A workflow's or a shortcut's person need not be in the channel the job's thread is in.
    w.slack.notAMember('C0DOCS', 'U0ALICE');
    const job = await w.job({ phase: 'active', threadTs: ROOT, runCount: 1 });
    await sync(job);
    expect(session()).toMatchObject({ status: 'processing', initiator: undefined });
    const calls = w.slack.callsTo('agents.sessions.setStatus').map((c) => c.args);
    expect(calls.map((args) => args.initiator_user_id)).toEqual(['U0ALICE', undefined]);
    expect(calls[1]).toMatchObject({ status: 'processing', title: 'Document the retry settings' });
    // Slack reads the initiator only when it makes the session: later statuses go without one.
    await sync({ ...job, phase: 'idle', lastOutcome: 'completed_pr' });
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(3);
    expect(session()?.history).toEqual(['processing', 'active']);
    expect(w.logged('made it without one')).toHaveLength(1);
    expect(w.logged('cards go on without it')).toEqual([]);
  });

  it.each([
    'user_not_in_channel',
    'invalid_initiator',
    'invalid_initiator_user_id',
    'initiator_not_in_channel',
    'user_not_found',
    'invalid_user',
    'not_in_channel',
  ])('is asked once more without the initiator when Slack answers %s', async (code) => {
    w.slack.fail('agents.sessions.setStatus', { error: code });
    await sync(await w.job({ phase: 'active', threadTs: ROOT }));
    expect(session()).toMatchObject({ status: 'processing', initiator: undefined });
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(2);
  });

  it('gives up as before when the call without an initiator is refused too (the bot is not in the channel)', async () => {
    const job = await w.job({ phase: 'active', threadTs: ROOT });
    w.slack.fail('agents.sessions.setStatus', { error: 'not_in_channel' }, { error: 'not_in_channel' });
    w.slack.fail('agents.sessions.setStatus', { error: 'not_in_channel' });
    await expect(sync(job)).resolves.toBeUndefined();
    await expect(sync(job)).resolves.toBeUndefined();
    expect(w.slack.callsTo('agents.sessions.setStatus').map((c) => c.args.initiator_user_id)).toEqual([
      'U0ALICE',
      undefined,
      undefined,
    ]);
    expect(w.logged('cards go on without it')).toHaveLength(1);
    expect(w.slack.sessions.size).toBe(0);
  });

  it('passes on an error that is not Slack’s', async () => {
    const job = await w.job({ phase: 'active', threadTs: ROOT });
    const broken = createSessionSync({
      sessions: {
        setStatus: async () => {
          throw new TypeError('a bug');
        },
      },
      logger: w.logger,
    });
    await expect(broken(job)).rejects.toThrow(TypeError);
  });
});
