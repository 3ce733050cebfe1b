import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { START_STEP_CALLBACK_ID, startJobStep } from '../../../src/features/workflow-steps/start-job-step.js';
import { stepText } from '../../../src/features/workflow-steps/wording.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { functionExecuted, USER_CONTEXT_SECRET, userContext } from '../../helpers/workflow-steps.js';

type Args = Parameters<ReturnType<typeof startJobStep>>[0];

const PERSON = 'W0GRIDUSER';
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

let executions = 0;
/**
 * Calls the listener with `function_executed` for "Start a docs agent job", as Slack sends it;
 * `fail` is Bolt's, answering the step with an error.
 */
async function startStep(
  inputs: Record<string, unknown> = {},
  options: { context?: Record<string, unknown>; executionId?: string; fail?: ReturnType<typeof vi.fn> } = {},
) {
  const executionId = options.executionId ?? `Fx0START${++executions}`;
  const event = functionExecuted({
    callbackId: START_STEP_CALLBACK_ID,
    executionId,
    inputs: {
      instruction: 'Document the CLI flags',
      channel_id: CHANNEL,
      user_context: userContext(PERSON),
      ...inputs,
    },
    token: 'xwfp-test-not-a-real-token',
  });
  const fail = options.fail ?? vi.fn(async () => {});
  const args = boltEventArgs<Args>(event, options.context);
  await startJobStep(w.deps)({ ...args, fail } as unknown as Args);
  return { executionId, fail };
}

/** The step's refusal queued for the outbox, as Slack will show it (plain text). */
const refusal = (executionId: string, words: string) => ({
  type: 'complete_step',
  executionId,
  result: { error: words },
});

describe('"Start a docs agent job"', () => {
  it('records a job for the person who used the workflow, in the channel it names, then starts it', async () => {
    await startStep();
    const [job] = await w.store.recentJobs({ requesterId: PERSON }, 5);
    expect(job).toMatchObject({ origin: 'workflow', channelId: CHANNEL, teamId: TEAM, threadTs: null });
    await w.idle();
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the CLI flags');
  });

  it('under the message it names, and on the project it names when the deployment serves it', async () => {
    await startStep({ thread_ts: ' 1700000100.000100 ', project: w.config.agent.projectId });
    const [job] = await w.store.recentJobs({ requesterId: PERSON }, 5);
    expect(job).toMatchObject({ threadTs: '1700000100.000100', projectId: w.config.agent.projectId });
  });

  it('inputs Workflow Builder left empty (null, blank) are taken as not given', async () => {
    await startStep({ thread_ts: null, project: '  ' });
    const [job] = await w.store.recentJobs({ requesterId: PERSON }, 5);
    expect(job).toMatchObject({ threadTs: null });
  });

  it('the same execution delivered twice records and starts one job', async () => {
    await startStep({}, { executionId: 'Fx0TWICE' });
    await startStep({}, { executionId: 'Fx0TWICE' });
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it('names the workspace of the delivery, or Bolt’s when the envelope does not say', async () => {
    const accept = vi.spyOn(w.deps.jobs, 'recordJob');
    await startStep();
    const event = functionExecuted({
      callbackId: START_STEP_CALLBACK_ID,
      executionId: 'Fx0NOTEAM',
      inputs: { instruction: 'Document the CLI', channel_id: CHANNEL, user_context: userContext(PERSON) },
      token: 'xwfp-test-not-a-real-token',
    });
    const args = boltEventArgs<Args>(event, { teamId: 'E0GRID' });
    Reflect.deleteProperty(args.body as object, 'team_id');
    await startJobStep(w.deps)({ ...args, fail: vi.fn() } as unknown as Args);
    expect(accept.mock.calls.map((c) => c[0].teamId)).toEqual([TEAM, 'E0GRID']);
  });

  it.each([
    ['no instruction', { instruction: undefined }, stepText.noInstruction()],
    ['an instruction of blanks only', { instruction: ' \n\t ' }, stepText.noInstruction()],
    ['a direct message for its channel', { channel_id: 'D0ALICE' }, stepText.direct()],
    ['a project the deployment does not serve', { project: 'someone-elses-docs' }, stepText.unknownProject()],
    ['no channel', { channel_id: undefined }, stepText.notUnderstood()],
    ['a person that is not text', { user_id: { id: PERSON } }, stepText.notUnderstood()],
    ['a person id that is no person’s', { user_id: 'B0BOT' }, stepText.notUnderstood()],
    [
      'a user context without a person',
      { user_context: { secret: USER_CONTEXT_SECRET } },
      stepText.notUnderstood(),
    ],
    ['no person at all', { user_context: null, user_id: '' }, stepText.noPerson()],
  ])('with %s: records no job, and the step fails with the reason', async (_what, inputs, words) => {
    const { executionId, fail } = await startStep(inputs);
    expect(w.jobCount()).toBe(0);
    expect(w.outbox().map((r) => r.payload)).toEqual([refusal(executionId, words)]);
    expect(fail).not.toHaveBeenCalled();
  });

  describe('whose job it is', () => {
    const OTHER = 'U0SERVICE';
    const refusedFor = async (inputs: Record<string, unknown>, words: string) => {
      const { executionId } = await startStep(inputs);
      await w.idle();
      expect(w.jobCount()).toBe(0);
      expect(w.outbox().map((r) => r.payload)).toEqual([refusal(executionId, words)]);
      expect(w.agent.createJob).not.toHaveBeenCalled();
    };

    it('the person who used the workflow, also when "On behalf of" names them', async () => {
      await startStep({ user_id: PERSON });
      const [job] = await w.store.recentJobs({ requesterId: PERSON }, 5);
      expect(job).toMatchObject({ origin: 'workflow', requesterId: PERSON });
    });

    it('naming someone else in a workflow a person used is refused: the job would be theirs', async () => {
      await refusedFor({ user_id: OTHER }, stepText.onBehalfOfWithPerson(OTHER, PERSON));
    });

    it('a workflow built with only "On behalf of" (no person who used it) is refused the same way', async () => {
      await refusedFor({ user_context: undefined, user_id: OTHER }, stepText.onBehalfOfRefused(OTHER, false));
    });

    it('a person the setting does not list is refused, saying the setting does not list them', async () => {
      await w.stop();
      w = createListenerWorld({ WORKFLOW_ON_BEHALF_OF_USER_IDS: 'U0OTHERSERVICE' });
      await refusedFor({ user_context: undefined, user_id: OTHER }, stepText.onBehalfOfRefused(OTHER, true));
    });

    it('a person the setting lists gets the job of a workflow no person used, and it is logged', async () => {
      await w.stop();
      w = createListenerWorld({ WORKFLOW_ON_BEHALF_OF_USER_IDS: ` ${OTHER} , W0SECOND` });
      const { executionId } = await startStep({ user_context: undefined, user_id: OTHER });
      await w.idle();
      expect((await w.store.recentJobs({ requesterId: OTHER }, 5)).map((j) => j.origin)).toEqual([
        'workflow',
      ]);
      const logged = w.logs.filter((l) => l.includes('workflow step for a named person'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0] as string)).toMatchObject({ executionId, user: OTHER });
    });

    it('a person the setting lists is still refused where a person used the workflow', async () => {
      await w.stop();
      w = createListenerWorld({ WORKFLOW_ON_BEHALF_OF_USER_IDS: OTHER });
      await refusedFor({ user_id: OTHER }, stepText.onBehalfOfWithPerson(OTHER, PERSON));
    });

    it('the secret Slack puts in the person who used the workflow is never logged', async () => {
      await startStep({ user_id: OTHER });
      await startStep({ user_context: { id: 'not a person', secret: USER_CONTEXT_SECRET } });
      await w.idle();
      expect(w.logged('warn', 'workflow step inputs not understood')).toHaveLength(1);
      expect(w.logs.filter((l) => l.includes(USER_CONTEXT_SECRET))).toEqual([]);
    });
  });

  it('inputs it cannot read are logged by field, never by value', async () => {
    await startStep({ channel_id: 42, instruction: ['the launch date is 12 March'] });
    const [line] = w.logged('warn', 'workflow step inputs not understood');
    expect(JSON.parse(line as string).fields).toEqual([
      'instruction: invalid_type',
      'channel_id: invalid_type',
    ]);
    expect(line).not.toContain('launch date');
  });

  it('an event it cannot read records nothing and fails nothing', async () => {
    const fail = vi.fn();
    const args = boltEventArgs<Args>({ type: 'function_executed', inputs: {} });
    await startJobStep(w.deps)({ ...args, fail } as unknown as Args);
    expect(w.outbox()).toEqual([]);
    expect(fail).not.toHaveBeenCalled();
  });

  describe('when the store cannot record it', () => {
    beforeEach(() => {
      vi.spyOn(w.deps.jobs, 'recordJob').mockRejectedValue(new Error('disk I/O error'));
    });

    it('over HTTP, fails the event so Slack delivers it again, and leaves the step running', async () => {
      const fail = vi.fn(async () => {});
      await expect(startStep({}, { fail })).rejects.toThrow('disk I/O error');
      expect(fail).not.toHaveBeenCalled();
    });

    it('on Slack’s last retry, fails the step at once, so the workflow does not wait', async () => {
      const { fail } = await startStep({}, { context: { retryNum: 3 } });
      expect(fail).toHaveBeenCalledWith({ error: stepText.notRecorded() });
    });

    it('a refusal the store cannot record is treated the same way', async () => {
      vi.spyOn(w.deps.outbox, 'enqueue').mockRejectedValue(new Error('disk I/O error'));
      const { fail } = await startStep({ channel_id: 'D0ALICE' }, { context: { retryNum: 3 } });
      expect(fail).toHaveBeenCalledOnce();
    });

    it('in Socket Mode, fails the step at once; a failure to fail it is logged, not thrown', async () => {
      await w.stop();
      w = createListenerWorld({}, { socketMode: true });
      vi.spyOn(w.deps.jobs, 'recordJob').mockRejectedValue(new Error('disk I/O error'));
      const fail = vi.fn(async () => {
        throw new Error('execution_not_in_running_state');
      });
      await startStep({}, { fail });
      expect(fail).toHaveBeenCalledOnce();
      expect(w.logged('error', 'could not fail a workflow step')).toHaveLength(1);
    });
  });
});
