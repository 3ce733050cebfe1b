import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { text } from '../../src/blocks/messages.js';
import { countNotRecorded, failedFields, logUnreadable, notRecorded } from '../../src/http/not-recorded.js';
import type { JobService } from '../../src/jobs/job-service.js';
import { createLogger } from '../../src/logging/logger.js';
import { md } from '../../src/slack/mrkdwn.js';
import { TEAM } from '../helpers/fake-network.js';
import {
  mentionRequest,
  recordingOf,
  shortcutRequest,
  startRequest,
  stepRequest,
} from '../helpers/job-requests.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';

describe('notRecorded', () => {
  let w: ListenerWorld;
  beforeEach(() => {
    w = createListenerWorld();
  });
  afterEach(() => w.stop());

  const failure = new Error('SQLITE_BUSY: database is locked');
  const where = { channel: CHANNEL, user: REQUESTER, threadTs: '1700000000.000001' };

  it('over HTTP, on a first delivery or an early retry: passes the error on so Slack delivers it again', () => {
    for (const retryNum of [undefined, 1, 2]) {
      expect(() => notRecorded(w.deps, failure, { retryNum }, where)).toThrow(failure);
    }
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    const lines = w.logged('error', 'could not record an instruction');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ redeliveryExpected: true });
  });

  it('on Slack’s last retry: tells the person privately, in the thread, that nothing was recorded', async () => {
    notRecorded(w.deps, failure, { retryNum: 3 }, where);
    await w.idle();
    expect(w.slack.postEphemeral).toHaveBeenCalledWith({ ...where, text: text.notRecorded() });
    expect(JSON.parse(w.logged('error', 'could not record')[0] as string)).toMatchObject({
      redeliveryExpected: false,
    });
  });

  it('in Socket Mode (acknowledged before the listener ran): tells the person at once, with the note given', async () => {
    await w.stop();
    w = createListenerWorld({}, { socketMode: true });
    // A surface's own words (a stop's: press stop again), not the instruction's default.
    const note = md`:warning: I could not record your stop just now.`;
    notRecorded(w.deps, failure, {}, { channel: CHANNEL, user: REQUESTER }, note);
    await w.idle();
    expect(w.slack.postEphemeral).toHaveBeenCalledWith({ channel: CHANNEL, user: REQUESTER, text: note });
  });

  it('when Slack did not say whose it was: logs it, and tells no one', async () => {
    notRecorded(w.deps, failure, { retryNum: 3 }, { channel: CHANNEL, user: undefined });
    await w.idle();
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    expect(w.logged('error', 'could not record an instruction')).toHaveLength(1);
  });

  it('with no background slot free: the log is the note’s only trace, and names where it was', () => {
    vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);
    notRecorded(w.deps, failure, { retryNum: 5 }, where);
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    const [line] = w.logged('error', 'no room to tell the person');
    expect(JSON.parse(line as string)).toMatchObject({ channel: CHANNEL, user: REQUESTER });
  });
});

describe('countNotRecorded', () => {
  let w: JobWorld;
  let service: JobService;
  let jobs: JobService;
  let record: ReturnType<typeof recordingOf>;
  const metrics = { instruction: vi.fn() };
  let closed = false;
  beforeEach(() => {
    w = createJobWorld();
    closed = false;
    metrics.instruction.mockClear();
    service = w.service();
    jobs = countNotRecorded(service, metrics);
    // Each place a job starts from counts its own recording, with its surface's label.
    record = recordingOf(jobs, w, metrics);
  });
  afterEach(async () => {
    service.stop();
    if (!closed) await w.store.close();
  });

  /** The store stops answering: nothing can be recorded. */
  async function storeGone() {
    await w.store.close();
    closed = true;
  }

  const command = () => record.command(startRequest({ responseUrl: null }));

  it('passes an instruction the store recorded through, counting nothing', async () => {
    const id = await command();
    expect(typeof id).toBe('number');
    expect((await w.job(id as number)).instruction).toBe('Document the rate limits');
    expect(metrics.instruction).not.toHaveBeenCalled();
  });

  it('counts an instruction the store could not record once per attempt, and lets the error through', async () => {
    await storeGone();
    await expect(command()).rejects.toThrow();
    await expect(command()).rejects.toThrow();
    expect(metrics.instruction.mock.calls).toEqual([
      ['command', 'not_recorded'],
      ['command', 'not_recorded'],
    ]);
  });

  it('counts each place an instruction arrives from as its own surface', async () => {
    await storeGone();
    const attempts: [string, () => Promise<unknown>][] = [
      ['mention', () => record.mention(mentionRequest())],
      ['direct', () => record.direct(mentionRequest({ channelId: 'D0DIRECT' }))],
      ['shortcut', () => record.shortcut(shortcutRequest())],
      ['workflow', () => record.step(stepRequest({ executionId: 'Fx0TEST1' }))],
      [
        'reply',
        () =>
          jobs.acceptReply({
            teamId: TEAM,
            channelId: CHANNEL,
            threadTs: '1700000000.000001',
            messageTs: '1700000300.000300',
            userId: REQUESTER,
            text: 'Also the SDK',
          }),
      ],
      // A follow-up a modal carried is a reply to the job all the same.
      [
        'reply',
        () =>
          jobs.acceptFollowUp({
            jobId: 1,
            source: { kind: 'modal', viewId: 'V0FIX' },
            teamId: TEAM,
            userId: REQUESTER,
            text: 'Fix the table',
          }),
      ],
    ];
    for (const [surface, attempt] of attempts) {
      metrics.instruction.mockClear();
      await expect(attempt(), surface).rejects.toThrow();
      expect(metrics.instruction.mock.calls, surface).toEqual([[surface, 'not_recorded']]);
    }
  });

  it('leaves every other part of the job service as it is', () => {
    expect(jobs.withdrawWaiting).toBe(service.withdrawWaiting);
    expect(jobs.withdrawInstruction).toBe(service.withdrawInstruction);
    expect(jobs.recover).toBe(service.recover);
    expect(jobs.recordJob).toBe(service.recordJob);
    expect(jobs.acceptReply).not.toBe(service.acceptReply);
  });
});

const schema = z.object({ user: z.string().min(1), ts: z.string(), thread: z.object({ ts: z.string() }) });

function logged(event: Record<string, unknown>) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
  const parsed = schema.safeParse(event);
  if (parsed.success) throw new Error('expected the event not to parse');
  logUnreadable(logger, 'direct message', event, parsed.error);
  return lines;
}

describe('logUnreadable', () => {
  it('logs one warning naming what the event was and which fields failed, and how', () => {
    const lines = logged({ type: 'message', subtype: 'file_share', user: '', ts: 17, thread: { ts: 1 } });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'warn',
      what: 'direct message',
      type: 'message',
      subtype: 'file_share',
    });
    expect(line.fields).toEqual(['user: too_small', 'ts: invalid_type', 'thread.ts: invalid_type']);
  });

  it('never logs what a person wrote, even in a field that failed', () => {
    const secretWords = 'the launch date is 12 March';
    const lines = logged({ type: 'message', user: secretWords, ts: secretWords, text: secretWords });
    expect(lines.join('\n')).not.toContain('launch date');
  });

  it('leaves out a type or subtype that is not a string', () => {
    const line = JSON.parse(logged({ type: { x: 1 }, subtype: 7, user: 'U0A', ts: '1' })[0] as string);
    expect(line.type).toBeUndefined();
    expect(line.subtype).toBeUndefined();
  });
});

describe('failedFields', () => {
  it('names the payload itself when the whole of it is wrong', () => {
    const parsed = schema.safeParse('not an event');
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(failedFields(parsed.error)).toEqual(['(payload): invalid_type']);
  });
});
