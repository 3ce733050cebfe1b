import { describe, expect, it } from 'vitest';
import { recordingWorld, stepRequest } from '../../helpers/job-requests.js';

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
  });
});
