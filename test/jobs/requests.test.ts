/**
 * What each request handed to the job service promises by its fields (requests.ts): the ids
 * that make a repeat start nothing, what an absent field means, and the outcomes a listener
 * answers Slack from. Checked on the job service the listeners call.
 */
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { AccessDecision } from '../../src/access/access-policy.js';
import { createJobService, type JobService } from '../../src/jobs/job-service.js';
import type { DirectRequest, MentionOutcome, MentionRequest, RetryOutcome } from '../../src/jobs/requests.js';
import { mentionRequest, shortcutRequest, startRequest, stepRequest } from '../helpers/job-requests.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
let jobs: JobService;
function setUp(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  jobs = createJobService(w.deps);
}
beforeEach(() => setUp());
afterEach(async () => {
  jobs.stop();
  await w.store.close();
});

const jobCount = () => (w.store.db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;

describe('StartRequest', () => {
  it('triggerId: a repeat of the same invocation never records a second job', async () => {
    const id = await jobs.acceptCommand(startRequest());
    expect(id).toBeTypeOf('number');
    expect(await jobs.acceptCommand(startRequest())).toBeUndefined();
    expect(await jobs.acceptCommand(startRequest({ triggerId: 'trigger-2' }))).toBeTypeOf('number');
    expect(jobCount()).toBe(2);
  });

  it('audience: what the command said is recorded; nothing said leaves it to Slack (unknown until asked)', async () => {
    const said = (await jobs.acceptCommand(startRequest({ audience: 'private' }))) as number;
    const unsaid = (await jobs.acceptCommand(startRequest({ triggerId: 'trigger-2' }))) as number;
    expect((await w.job(said)).privacy).toBe('private');
    expect((await w.job(unsaid)).privacy).toBe('unknown');
  });

  it('responseUrl: kept with the job, to answer the person privately', async () => {
    const id = (await jobs.acceptCommand(startRequest())) as number;
    expect((await w.job(id)).responseUrl).toBe('https://hooks.slack.test/commands/1');
  });
});

describe('MentionRequest and DirectRequest', () => {
  it('a mention starts a job; the same message again is a repeat; a mention in its thread is a reply', async () => {
    const first = await jobs.acceptMention(mentionRequest());
    expect(first).toEqual({ job: expect.any(Number) });
    expect(await jobs.acceptMention(mentionRequest())).toBeUndefined();
    const job = await w.job((first as { job: number }).job);
    const inThread = await jobs.acceptMention(
      mentionRequest({
        messageTs: '1700000300.000300',
        threadTs: job.threadTs ?? undefined,
        text: 'Also the SDK',
      }),
    );
    expect(inThread).toEqual({ reply: expect.any(Number) });
    expect(jobCount()).toBe(1);
  });

  it('a direct message carries the same facts, its channel the conversation', async () => {
    expectTypeOf<DirectRequest>().toEqualTypeOf<MentionRequest>();
    const outcome = await jobs.acceptDirect(mentionRequest({ channelId: 'D0DIRECT' }));
    const job = await w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({ channelId: 'D0DIRECT', origin: 'direct', privacy: 'direct' });
  });
});

describe('ShortcutRequest and StepRequest', () => {
  it('viewId: the same submission again is a repeat', async () => {
    expect(await jobs.acceptShortcut(shortcutRequest())).toEqual({ job: expect.any(Number) });
    expect(await jobs.acceptShortcut(shortcutRequest())).toBe('repeat');
    expect(jobCount()).toBe(1);
  });

  it('executionId: the same run of the step is the job it recorded before', async () => {
    const first = await jobs.acceptStep(stepRequest());
    expect(first).toEqual({ job: expect.any(Number), created: true });
    expect(await jobs.acceptStep(stepRequest())).toEqual({
      job: (first as { job: number }).job,
      created: false,
    });
    expect(jobCount()).toBe(1);
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
