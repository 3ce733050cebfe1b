import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { registerFunctions } from '../../../src/listeners/functions/index.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { functionExecuted, userContext } from '../../helpers/workflow-steps.js';

/** The Workflow Builder steps the manifest declares, by callback_id. */
const manifest = parse(readFileSync(new URL('../../../manifest.yml', import.meta.url), 'utf8')) as {
  functions: Record<string, unknown>;
};

let w: ListenerWorld;
let app: ListenerApp;
const remember = vi.fn();
beforeAll(async () => {
  w = createListenerWorld();
  w.deps.steps = { remember };
  app = await startListenerApp(w, registerFunctions);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

const TOKEN = 'xwfp-test-not-a-real-token';
const execute = (callbackId: string, executionId: string, inputs: Record<string, unknown>) =>
  app.event(functionExecuted({ callbackId, executionId, inputs, token: TOKEN }));

describe('registerFunctions', () => {
  it('the manifest declares exactly the two steps routed here', () => {
    expect(Object.keys(manifest.functions).sort()).toEqual([
      'start_docs_agent_job',
      'wait_for_docs_agent_job',
    ]);
  });

  it('routes "Start a docs agent job": recorded before the receiver answers, its token kept', async () => {
    const res = await execute('start_docs_agent_job', 'Fx0ROUTED1', {
      instruction: 'Document the CLI',
      channel_id: CHANNEL,
      user_context: userContext('W0GRIDUSER'),
    });
    expect(res.status).toBe(200);
    expect(await w.store.recentJobs({ requesterId: 'W0GRIDUSER' }, 5)).toEqual([
      expect.objectContaining({ origin: 'workflow', triggerKey: expect.stringContaining('Fx0ROUTED1') }),
    ]);
    expect(remember).toHaveBeenCalledWith('Fx0ROUTED1', TOKEN, expect.any(Number));
    await w.idle();
  });

  it('routes "Wait for a docs agent job": recorded as waiting before the receiver answers', async () => {
    const res = await execute('wait_for_docs_agent_job', 'Fx0ROUTED2', { job_id: 41 });
    expect(res.status).toBe(200);
    expect(w.outbox().map((r) => r.payload)).toContainEqual(
      expect.objectContaining({ type: 'await_job', executionId: 'Fx0ROUTED2', job: 41 }),
    );
  });
});
