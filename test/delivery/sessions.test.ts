import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createAgentSessions,
  createSessionSync,
  currentRun,
  isStopped,
  jobTitle,
  SESSION_TITLE_CHARS,
  SESSION_TITLE_MAX_CHARS,
  sessionStatusOf,
} from '../../src/delivery/sessions.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import { createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller, SlackCallError } from '../../src/slack/caller.js';
import type { RunOutcome } from '../../src/store/types.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';
import { jobRecord } from '../helpers/job-record.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

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
    store: w.store,
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

  it('records the status it showed, and costs no call while the job still shows it', async () => {
    const job = await w.job({ phase: 'active', threadTs: ROOT, runCount: 1 });
    await expect(sync(job)).resolves.toBe(true);
    const shown = await w.store.getJob(job.id);
    expect(shown?.sessionStatus).toBe('processing');
    // Its change time is the job's, not the session's.
    expect(shown?.updatedAt).toBe(job.updatedAt);
    await expect(sync(shown ?? job)).resolves.toBe(true);
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(1);
    // Another status is sent, and recorded.
    await sync({ ...(shown ?? job), phase: 'idle', lastOutcome: 'completed_pr' });
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(2);
    expect((await w.store.getJob(job.id))?.sessionStatus).toBe('active');
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
    await expect(sync(await w.job({ phase: 'active', threadTs: null }))).resolves.toBe(false);
    await expect(sync(await w.job({ phase: 'retried', threadTs: ROOT }))).resolves.toBe(false);
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
    // Not shown: the thread's emoji shows the job's progress instead.
    await expect(sync(first)).resolves.toBe(false);
    await expect(sync(second)).resolves.toBe(false);
    // Asked as the card was before the refusal was recorded.
    await expect(sync(first)).resolves.toBe(false);
    const warned = w.logged('cards go on without it');
    expect(warned).toHaveLength(2);
    expect(warned[0]).toContain('not_allowed_token_type');
    expect(warned[1]).toContain('invalid_arguments');
    expect(w.slack.sessions.size).toBe(0);
    // Refusals of the session itself are not asked again without the initiator.
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(3);
    // Recorded as refused: the same status is not asked again, another one is.
    const refused = (await w.store.getJob(first.id)) ?? first;
    expect(refused.sessionStatus).toBe('refused:processing');
    await expect(sync(refused)).resolves.toBe(false);
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(3);
    await expect(sync({ ...refused, phase: 'idle', lastOutcome: 'completed_pr' })).resolves.toBe(true);
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(4);
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
    await expect(sync(job)).resolves.toBe(false);
    await expect(sync(job)).resolves.toBe(false);
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
      store: w.store,
      logger: w.logger,
    });
    await expect(broken(job)).rejects.toThrow(TypeError);
  });
});

const live = (instruction: string) => ({ instruction, erasedAt: null });

describe('jobTitle', () => {
  it('collapses whitespace and control characters to single spaces', () => {
    expect(jobTitle(live('  Document\n\tthe\u0007 cache  layer '), 100)).toBe('Document the cache layer');
  });

  it('bounds the length, the ellipsis included', () => {
    expect(jobTitle(live('Document the cache layer'), 12)).toBe('Document th…');
  });

  it('is empty once retention erased the instruction', () => {
    expect(jobTitle({ instruction: 'Document the cache layer', erasedAt: 1_700_000_000_000 }, 100)).toBe('');
  });
});

const SECRET = 'mint_not_a_real_key_0123456789';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

async function sessionsOnStandIn() {
  slack = await startSlackStandIn();
  const { client, logger } = appSlackClient(slack.apiUrl);
  const errors: [string, string][] = [];
  const sessions = createAgentSessions(
    createSlackCaller({
      client,
      logger,
      redact: createRedactor([SECRET]),
      onError: (method, code) => errors.push([method, code]),
    }),
  );
  return { slack, sessions, errors };
}

describe('a thread’s agent session', () => {
  it('is made by its first status, with its title and initiator, and only moves status after', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    const thread = { channel: 'C0DOCS', threadTs: '1700000000.000100' };
    await sessions.setStatus({
      ...thread,
      status: 'active',
      title: 'Document the CLI',
      initiator: 'U0ALICE',
    });
    await sessions.setStatus({ ...thread, status: 'processing', title: 'A later title', initiator: 'U0BOB' });
    await sessions.setStatus({ ...thread, status: 'closed' });
    expect(slack.sessionOf(thread.channel, thread.threadTs)).toEqual({
      ...thread,
      status: 'closed',
      title: 'Document the CLI',
      initiator: 'U0ALICE',
      history: ['active', 'processing', 'closed'],
    });
    expect(slack.callsTo('agents.sessions.setStatus')[0]?.args).toMatchObject({
      channel_id: 'C0DOCS',
      thread_ts: '1700000000.000100',
      status: 'active',
      title: 'Document the CLI',
      initiator_user_id: 'U0ALICE',
    });
  });

  it('sends no title or initiator when it has none (an empty title included)', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active', title: '' });
    const [call] = slack.callsTo('agents.sessions.setStatus');
    expect(call?.args).not.toHaveProperty('title');
    expect(call?.args).not.toHaveProperty('initiator_user_id');
  });

  it('masks secrets in the title, as everything the bot sends', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({
      channel: 'C0DOCS',
      threadTs: '1.1',
      status: 'active',
      title: `Rotate ${SECRET} in the guide`,
    });
    expect(slack.sessionOf('C0DOCS', '1.1')?.title).toBe('Rotate [redacted] in the guide');
    expect(JSON.stringify(slack.calls)).not.toContain(SECRET);
  });

  it('keeps sessions of different threads apart, Enterprise Grid initiators included', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    await sessions.setStatus({
      channel: 'C0DOCS',
      threadTs: '1.1',
      status: 'active',
      initiator: 'W0GRIDUSER',
    });
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '2.2', status: 'suspended' });
    expect(slack.sessionOf('C0DOCS', '1.1')).toMatchObject({ status: 'active', initiator: 'W0GRIDUSER' });
    expect(slack.sessionOf('C0DOCS', '2.2')).toMatchObject({ status: 'suspended', initiator: undefined });
  });

  it('throws Slack’s refusal typed, and reports it by method and code', async () => {
    const { slack, sessions, errors } = await sessionsOnStandIn();
    slack.fail('agents.sessions.setStatus', { error: 'not_in_channel' });
    const error = await sessions
      .setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackCallError);
    expect(error).toMatchObject({ code: 'not_in_channel', permanent: true });
    expect(errors).toEqual([['agents.sessions.setStatus', 'not_in_channel']]);
    expect(slack.sessions.size).toBe(0);
  });

  it('is refused whole when the title is over Slack’s limit: callers shorten it first', async () => {
    const { slack, sessions, errors } = await sessionsOnStandIn();
    const title = 'x'.repeat(SESSION_TITLE_MAX_CHARS);
    await sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'active', title });
    await expect(
      sessions.setStatus({ channel: 'C0DOCS', threadTs: '2.2', status: 'active', title: `${title}y` }),
    ).rejects.toMatchObject({ code: 'invalid_arguments', permanent: true });
    expect(slack.sessionOf('C0DOCS', '1.1')?.title).toBe(title);
    expect(errors).toEqual([['agents.sessions.setStatus', 'invalid_arguments']]);
  });

  it('passes a rate limit on with Slack’s wait, without waiting itself', async () => {
    const { slack, sessions } = await sessionsOnStandIn();
    slack.fail('agents.sessions.setStatus', { status: 429, retryAfter: 30 });
    await expect(
      sessions.setStatus({ channel: 'C0DOCS', threadTs: '1.1', status: 'processing' }),
    ).rejects.toMatchObject({ code: 'ratelimited', retryAfterMs: 30_000 });
    expect(slack.callsTo('agents.sessions.setStatus')).toHaveLength(1);
  });
});

describe("a job's agent session status", () => {
  it('is processing while the job starts or the agent works, active while it waits, closed when it cannot go on', () => {
    const statuses = Object.fromEntries(
      JOB_PHASES.map((phase) => [phase, sessionStatusOf(jobRecord({ phase }))]),
    );
    expect(statuses).toEqual({
      accepted: 'processing',
      posting: 'processing',
      creating: 'processing',
      active: 'processing',
      idle: 'active',
      not_started: 'closed',
      start_unknown: 'closed',
      gone: 'closed',
      // The thread belongs to the job that replaced it.
      retried: null,
    });
  });

  it('is closed after a run the job is no longer followed after, and active after any other', () => {
    for (const lastOutcome of ['archived', 'gone', 'stopped_watching'] as RunOutcome[])
      expect(sessionStatusOf(jobRecord({ phase: 'idle', lastOutcome }))).toBe('closed');
    for (const lastOutcome of ['completed_pr', 'completed_no_changes', 'failed'] as RunOutcome[])
      expect(sessionStatusOf(jobRecord({ phase: 'idle', lastOutcome }))).toBe('active');
  });

  it('leaves processing for the run someone pressed stop on, and only that run', () => {
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 2, stoppedRun: 2 }))).toBe('active');
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 3, stoppedRun: 2 }))).toBe('processing');
    // While the job starts, the run being started is the next one.
    const starting = jobRecord({ phase: 'creating', runCount: 0 });
    expect(currentRun(starting)).toBe(1);
    expect(sessionStatusOf({ ...starting, stoppedRun: 1 })).toBe('active');
    expect(sessionStatusOf({ ...starting, stoppedRun: 0 })).toBe('processing');
  });

  it('a stop recorded for a run being given covers it and the runs before it, not a later one', () => {
    // Pressed during run 2 with a reply on its way: recorded for run 3.
    expect(isStopped(3, 2)).toBe(true);
    expect(isStopped(3, 3)).toBe(true);
    expect(isStopped(3, 4)).toBe(false);
    expect(isStopped(null, 1)).toBe(false);
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 2, stoppedRun: 3 }))).toBe('active');
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 4, stoppedRun: 3 }))).toBe('processing');
  });

  it('is none for a job without a thread of its own', () => {
    expect(sessionStatusOf(jobRecord({ threadTs: null }))).toBeNull();
  });
});

describe("a job's title", () => {
  it('is one bounded line of readable plain text, and nothing once erased', () => {
    const job = jobRecord({ instruction: 'Fix <https://x.example|the page>\n\tfor <@U0BOB|bob> &amp; co' });
    expect(jobTitle(job, 80)).toBe('Fix the page (https://x.example) for @bob & co');
    expect(jobTitle(jobRecord({ instruction: 'x'.repeat(200) }), 80)).toHaveLength(80);
    expect(jobTitle({ ...job, erasedAt: 1 }, 80)).toBe('');
  });
});
