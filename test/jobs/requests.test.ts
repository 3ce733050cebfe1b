/**
 * What each request handed to the job kernel promises by its fields (requests.ts): the ids
 * that make a repeat start nothing, and the outcomes a listener answers Slack from. Checked on
 * the job service the listeners call.
 */
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { AccessDecision } from '../../src/access/access-policy.js';
import type { JobService } from '../../src/jobs/job-service.js';
import type { MentionOutcome, RetryOutcome } from '../../src/jobs/requests.js';
import { mentionRequest, recordingOf } from '../helpers/job-requests.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
let jobs: JobService;
let record: ReturnType<typeof recordingOf>;
function setUp(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  jobs = w.service();
  record = recordingOf(jobs, w);
}
beforeEach(() => setUp());
afterEach(async () => {
  jobs.stop();
  await w.store.close();
});

describe('MentionRequest', () => {
  it('a mention starts a job; the same message again is a repeat; a mention in its thread is a reply', async () => {
    const first = await record.mention(mentionRequest());
    expect(first).toEqual({ job: expect.any(Number) });
    expect(await record.mention(mentionRequest())).toBeUndefined();
    const job = await w.job((first as { job: number }).job);
    const inThread = await record.mention(
      mentionRequest({
        messageTs: '1700000300.000300',
        threadTs: job.threadTs ?? undefined,
        text: 'Also the SDK',
      }),
    );
    expect(inThread).toEqual({ reply: expect.any(Number) });
    expect(w.jobCount()).toBe(1);
  });
});

describe('outcomes', () => {
  it('are the shapes the listeners answer Slack from', () => {
    expectTypeOf<MentionOutcome>().toEqualTypeOf<{ job: number } | { reply: number } | undefined>();
    // A refused retry always carries why: never an allowed decision.
    expectTypeOf<Extract<RetryOutcome, { refused: unknown }>['refused']>().toEqualTypeOf<
      Extract<AccessDecision, { allowed: false }>
    >();
  });
});
