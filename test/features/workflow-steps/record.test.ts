import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobRecording, recordingOf, stepRequest } from '../../helpers/job-requests.js';
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
  });
});
