import { describe, expect, it } from 'vitest';
import { threadHasJobText } from '../../../src/blocks/refusal-texts.js';
import { mentionRequest, recordingWorld, stepRequest } from '../../helpers/job-requests.js';

const t = recordingWorld();

describe('StepRequest', () => {
  it('executionId: the same run of the step is the job it recorded before', async () => {
    const first = await t.record.step(stepRequest());
    expect(first).toEqual({ job: expect.any(Number), created: true });
    expect(await t.record.step(stepRequest())).toEqual({
      job: (first as { job: number }).job,
      created: false,
    });
    expect(t.w.jobCount()).toBe(1);
    // The step is answered once the job starts, not here.
    expect(t.w.outbox()).toEqual([]);
  });

  it('instruction: trimmed for the job, and read as plain text for the agent', async () => {
    const { job } = (await t.record.step(
      stepRequest({ instruction: '  Document <https://x.io|the webhooks>  ' }),
    )) as { job: number };
    expect((await t.w.job(job)).instruction).toBe('Document <https://x.io|the webhooks>');
    expect((await t.w.runs(job))[0]?.prompt).toBe('Document the webhooks (https://x.io)');
  });

  it('projectId: the job runs on the project the step names', async () => {
    const { job } = (await t.record.step(stepRequest({ projectId: 'proj_named' }))) as { job: number };
    expect((await t.w.job(job)).projectId).toBe('proj_named');
  });

  it('threadTs: under a message whose thread has a job, nothing is recorded and the step fails saying so', async () => {
    const threadTs = mentionRequest().messageTs;
    await t.record.mention(mentionRequest());
    expect(await t.record.step(stepRequest({ threadTs }))).toBe('thread_taken');
    expect(t.w.jobCount()).toBe(1);
    expect(t.w.outbox().map((r) => r.payload)).toEqual([
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
    const { job } = (await t.record.step(stepRequest())) as { job: number };
    const repeats = () => t.w.logs.filter((l) => l.includes('repeated'));
    expect(repeats()).toEqual([]);
    await t.record.step(stepRequest());
    expect(repeats()).toEqual([
      expect.stringMatching(new RegExp(`repeated workflow step ignored.*"jobId":${job}`)),
    ]);
  });
});
