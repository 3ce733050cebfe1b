import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { threadHasJobText } from '../../../src/blocks/refusal-texts.js';
import { jobRecording, mentionRequest, recordingOf, stepRequest } from '../../helpers/job-requests.js';
import { createJobWorld, type JobWorld } from '../../helpers/job-world.js';

let w: JobWorld;
let record: ReturnType<typeof recordingOf>;
beforeEach(() => {
  w = createJobWorld();
  record = recordingOf(jobRecording(w), w);
});
afterEach(() => w.store.close());

describe('StepRequest', () => {
  it('executionId: the same run of the step is the job it recorded before', async () => {
    const first = await record.step(stepRequest());
    expect(first).toEqual({ job: expect.any(Number), created: true });
    expect(await record.step(stepRequest())).toEqual({
      job: (first as { job: number }).job,
      created: false,
    });
    expect(w.jobCount()).toBe(1);
    // The step is answered once the job starts, not here.
    expect(w.outbox()).toEqual([]);
  });

  it('instruction: trimmed for the job, and read as plain text for the agent', async () => {
    const { job } = (await record.step(
      stepRequest({ instruction: '  Document <https://x.io|the webhooks>  ' }),
    )) as { job: number };
    expect((await w.job(job)).instruction).toBe('Document <https://x.io|the webhooks>');
    expect((await w.runs(job))[0]?.prompt).toBe('Document the webhooks (https://x.io)');
  });

  it('projectId: the job runs on the project the step names', async () => {
    const { job } = (await record.step(stepRequest({ projectId: 'proj_named' }))) as { job: number };
    expect((await w.job(job)).projectId).toBe('proj_named');
  });

  it('threadTs: under a message whose thread has a job, nothing is recorded and the step fails saying so', async () => {
    const threadTs = mentionRequest().messageTs;
    await record.mention(mentionRequest());
    expect(await record.step(stepRequest({ threadTs }))).toBe('thread_taken');
    expect(w.jobCount()).toBe(1);
    expect(w.outbox().map((r) => r.payload)).toEqual([
      expect.objectContaining({
        type: 'complete_step',
        executionId: stepRequest().executionId,
        result: { error: threadHasJobText() },
      }),
    ]);
  });
});

describe('what a step records exactly', () => {
  it('the same run delivered again is logged as ignored, once', async () => {
    const { job } = (await record.step(stepRequest())) as { job: number };
    const repeats = () => w.logs.filter((l) => l.includes('repeated'));
    expect(repeats()).toEqual([]);
    await record.step(stepRequest());
    expect(repeats()).toEqual([
      expect.stringMatching(new RegExp(`repeated workflow step ignored.*"jobId":${job}`)),
    ]);
  });
});
