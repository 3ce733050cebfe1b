import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countNotRecorded } from '../../src/jobs/count-not-recorded.js';
import { createJobService, type JobService } from '../../src/jobs/job-service.js';
import { TEAM } from '../helpers/fake-network.js';
import { mentionRequest, shortcutRequest, startRequest, stepRequest } from '../helpers/job-requests.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';

let w: JobWorld;
let service: JobService;
let jobs: JobService;
const metrics = { instruction: vi.fn() };
let closed = false;
beforeEach(() => {
  w = createJobWorld();
  closed = false;
  metrics.instruction.mockClear();
  service = createJobService(w.deps);
  jobs = countNotRecorded(service, metrics);
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

const command = () => jobs.acceptCommand(startRequest({ responseUrl: null }));

describe('countNotRecorded', () => {
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
      ['mention', () => jobs.acceptMention(mentionRequest())],
      ['direct', () => jobs.acceptDirect(mentionRequest({ channelId: 'D0DIRECT' }))],
      ['shortcut', () => jobs.acceptShortcut(shortcutRequest())],
      ['workflow', () => jobs.acceptStep(stepRequest({ executionId: 'Fx0TEST1' }))],
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
    expect(jobs.acceptEdit).toBe(service.acceptEdit);
    expect(jobs.recover).toBe(service.recover);
    expect(jobs.acceptCommand).not.toBe(service.acceptCommand);
  });
});
