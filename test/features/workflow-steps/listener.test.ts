import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  optionalInput,
  readStep,
  START_STEP_CALLBACK_ID,
  startJobStep,
  stepStartedAt,
  WAIT_STEP_CALLBACK_ID,
  waitJobStep,
} from '../../../src/features/workflow-steps/listener.js';
import { stepText } from '../../../src/features/workflow-steps/wording.js';
import { createLogger } from '../../../src/logging/logger.js';
import { STEP_TOKEN_MS, WAIT_LIMIT_MS } from '../../../src/slack/function-steps.js';
import { mrkdwnToPlain } from '../../../src/slack/mrkdwn.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { functionExecuted, USER_CONTEXT_SECRET, userContext } from '../../helpers/workflow-steps.js';

describe('reading a step event', () => {
  const TOKEN = 'xwfp-test-not-a-real-token';

  function read(event: unknown) {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [TOKEN], write: (l) => lines.push(l) });
    const steps = { remember: vi.fn() };
    const before = Date.now();
    const step = readStep({ logger, steps }, event);
    return { step, lines, remember: steps.remember, before };
  }

  const executed = (fields: Record<string, unknown> = {}) => ({
    ...functionExecuted({
      callbackId: 'start_docs_agent_job',
      executionId: 'Fx0STEP1',
      inputs: { instruction: 'Document the CLI', channel_id: 'C0API', user_id: 'W0GRIDUSER' },
      token: TOKEN,
    }),
    ...fields,
  });

  /** When the clock (faked) says the event arrived. */
  const RECEIVED_AT = Date.parse('2026-09-01T12:00:00.000Z');
  const seconds = (ms: number) => (ms / 1000).toFixed(6);

  afterEach(() => {
    vi.useRealTimers();
  });

  describe('readStep', () => {
    it('reads the execution and its inputs, and keeps the token to answer the step with', () => {
      const { step, remember, before } = read(executed());
      expect(step).toEqual({
        executionId: 'Fx0STEP1',
        inputs: { instruction: 'Document the CLI', channel_id: 'C0API', user_id: 'W0GRIDUSER' },
        elapsedMs: expect.any(Number),
      });
      expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, expect.any(Number));
      // functionExecuted's event_ts is now, to the second.
      expect(remember.mock.calls[0]?.[2]).toBeGreaterThanOrEqual(before - 1_000);
    });

    it('a step with no inputs and no token: read, with empty inputs, and no token kept', () => {
      const { step, remember } = read(executed({ inputs: undefined, bot_access_token: undefined }));
      expect(step).toMatchObject({ executionId: 'Fx0STEP1', inputs: {} });
      expect(remember).not.toHaveBeenCalled();
    });

    it('counts a step Slack delivers again late from its start: the token’s lifetime and its age', () => {
      vi.useFakeTimers({ now: RECEIVED_AT });
      const startedAt = RECEIVED_AT - 5 * 60_000;
      const { step, remember } = read(executed({ event_ts: seconds(startedAt) }));
      expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, startedAt);
      expect(step?.elapsedMs).toBe(5 * 60_000);
    });

    it('does not read a step Slack has already ended (delivered 15 minutes or more after its start), for either step', () => {
      vi.useFakeTimers({ now: RECEIVED_AT });
      const { step, remember, lines } = read(executed({ event_ts: seconds(RECEIVED_AT - 15 * 60_000) }));
      expect(step).toBeUndefined();
      expect(remember).not.toHaveBeenCalled();
      const logged = lines.filter((l) => l.includes('arrived after Slack ended it'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('"executionId":"Fx0STEP1"');
      expect(logged[0]).not.toContain(TOKEN);
    });

    it.each([
      ['in the future (clocks that disagree)', seconds(RECEIVED_AT + 90_000)],
      ['missing', undefined],
      ['not a time', 'yesterday'],
      ['a number instead of text', 1_788_264_000],
    ])('counts a step whose event_ts is %s from its receipt, and still reads it', (_what, eventTs) => {
      vi.useFakeTimers({ now: RECEIVED_AT });
      const { step, remember } = read(executed({ event_ts: eventTs }));
      expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, RECEIVED_AT);
      expect(step?.elapsedMs).toBe(0);
    });

    it.each([
      [
        'without its execution id',
        { function_execution_id: undefined },
        'function_execution_id: invalid_type',
      ],
      [
        'whose function has no callback_id',
        { function: { id: 'Fn0' } },
        'function.callback_id: invalid_type',
      ],
      ['whose inputs are a list', { inputs: ['Document the CLI'] }, 'inputs: invalid_type'],
      ['of another type', { type: 'function_executed_v2' }, 'type: invalid_value'],
      ['with an empty token', { bot_access_token: '' }, 'bot_access_token: too_small'],
    ])(
      'an event %s is not read: logged with the field that failed, the token never',
      (_what, fields, field) => {
        const { step, lines, remember } = read(executed(fields));
        expect(step).toBeUndefined();
        expect(remember).not.toHaveBeenCalled();
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0] as string)).toMatchObject({
          level: 'warn',
          msg: 'workflow step event not understood',
          fields: [field],
        });
        expect(lines[0]).not.toContain(TOKEN);
      },
    );
  });

  describe('stepStartedAt', () => {
    it.each([
      ['1788264000.000100', 1_788_264_000_000],
      ['1788263999.999900', 1_788_263_999_999],
      ['1788264060.000000', 1_788_264_000_000],
      [' ', 1_788_264_000_000],
      ['0', 1_788_264_000_000],
      ['-5', 1_788_264_000_000],
      ['Infinity', 1_788_264_000_000],
    ])('reads event_ts %j received at 1788264000000 as %d', (eventTs, startedAt) => {
      expect(stepStartedAt(eventTs, 1_788_264_000_000)).toBe(startedAt);
    });
  });

  describe('optionalInput', () => {
    it.each([
      [undefined, undefined],
      [null, undefined],
      ['', undefined],
      ['   ', undefined],
      [' 1700000100.000100 ', '1700000100.000100'],
    ])('reads %j as %j (an input Workflow Builder left empty arrives in any of these)', (value, read) => {
      expect(optionalInput.parse(value)).toBe(read);
    });

    it('does not read an input that is not text', () => {
      expect(optionalInput.safeParse(42).success).toBe(false);
    });
  });
});

describe('the start step', () => {
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
    options: {
      context?: Record<string, unknown>;
      executionId?: string;
      fail?: ReturnType<typeof vi.fn>;
    } = {},
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
      [
        'a project the deployment does not serve',
        { project: 'someone-elses-docs' },
        stepText.unknownProject(),
      ],
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
        await refusedFor(
          { user_context: undefined, user_id: OTHER },
          stepText.onBehalfOfRefused(OTHER, false),
        );
      });

      it('a person the setting does not list is refused, saying the setting does not list them', async () => {
        await w.stop();
        w = createListenerWorld({ WORKFLOW_ON_BEHALF_OF_USER_IDS: 'U0OTHERSERVICE' });
        await refusedFor(
          { user_context: undefined, user_id: OTHER },
          stepText.onBehalfOfRefused(OTHER, true),
        );
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
});

describe('the wait step', () => {
  type Args = Parameters<ReturnType<typeof waitJobStep>>[0];

  let w: ListenerWorld;
  beforeEach(() => {
    w = createListenerWorld();
  });
  afterEach(() => {
    vi.useRealTimers();
    return w.stop();
  });

  let executions = 0;
  /** Calls the listener with `function_executed` for "Wait for a docs agent job", as Slack sends it. */
  async function waitStep(inputs: Record<string, unknown>, fields: Record<string, unknown> = {}) {
    const executionId = `Fx0WAIT${++executions}`;
    const event = {
      ...functionExecuted({
        callbackId: WAIT_STEP_CALLBACK_ID,
        executionId,
        inputs,
        token: 'xwfp-test-not-a-real-token',
      }),
      ...fields,
    };
    // The step's deadline is read against the job world's clock (the app's is `Date.now`).
    await waitJobStep({ ...w.deps, now: w.ctx.now })(boltEventArgs<Args>(event));
    return executionId;
  }

  describe('"Wait for a docs agent job"', () => {
    it('is recorded at once as waiting for the job, until Slack’s time limit is near', async () => {
      const { job } = await w.insertJob();
      const executionId = await waitStep({ job_id: job.id });
      const [wait] = w.outbox();
      expect(wait?.payload).toMatchObject({ type: 'await_job', executionId, job: job.id });
      expect((wait?.payload as { deadline?: number } | undefined)?.deadline).toBeGreaterThan(w.clock.at);
    });

    it('takes the job id as Workflow Builder may pass it, as text', async () => {
      await waitStep({ job_id: '17' });
      expect(w.outbox()[0]?.payload).toMatchObject({ type: 'await_job', job: 17 });
    });

    it.each([
      ['no job id', {}],
      ['a job id that is not a number', { job_id: 'job_17' }],
      ['a job id of zero', { job_id: 0 }],
      ['a fractional job id', { job_id: 1.5 }],
    ])('with %s: the step fails with a reason, and the fields are logged', async (_what, inputs) => {
      const executionId = await waitStep(inputs);
      expect(w.outbox().map((r) => r.payload)).toEqual([
        {
          type: 'complete_step',
          executionId,
          result: { error: mrkdwnToPlain(stepText.notUnderstood()).trim() },
        },
      ]);
      expect(w.logged('warn', 'workflow step inputs not understood')).toHaveLength(1);
    });

    it('an event it cannot read records nothing', async () => {
      const event = { type: 'function_executed', inputs: { job_id: 1 } };
      await waitJobStep(w.deps)(boltEventArgs<Args>(event));
      expect(w.outbox()).toEqual([]);
      expect(w.logged('warn', 'workflow step event not understood')).toHaveLength(1);
    });

    describe('delivered late: its time counts from the step’s start (event_ts)', () => {
      /** The event arrives at RECEIVED_AT on the listener's clock, for a step started `lateMs` before. */
      const RECEIVED_AT = Date.parse('2026-09-01T12:30:00.000Z');
      const lateStep = (jobId: number, lateMs: number) => {
        vi.useFakeTimers({ now: RECEIVED_AT, toFake: ['Date'] });
        return waitStep({ job_id: jobId }, { event_ts: ((RECEIVED_AT - lateMs) / 1000).toFixed(6) });
      };
      const deadlineOf = (executionId: string) =>
        w
          .outbox()
          .map((r) => r.payload as { executionId?: string; deadline?: number })
          .find((p) => p.executionId === executionId)?.deadline;

      it('five minutes late: its deadline is 14 minutes from the start, 9 from now', async () => {
        const { job } = await w.insertJob();
        const executionId = await lateStep(job.id, 5 * 60_000);
        expect(deadlineOf(executionId)).toBe(w.clock.at + WAIT_LIMIT_MS - 5 * 60_000);
      });

      it('past its 14 minutes but inside Slack’s 15: recorded as due now, so it fails at once', async () => {
        const { job } = await w.insertJob();
        const executionId = await lateStep(job.id, WAIT_LIMIT_MS + 30_000);
        expect(deadlineOf(executionId)).toBe(w.clock.at - 30_000);
      });

      it('after Slack ended it: nothing recorded, logged with the execution and never the token', async () => {
        const { job } = await w.insertJob();
        const executionId = await lateStep(job.id, STEP_TOKEN_MS);
        expect(w.outbox()).toEqual([]);
        const logged = w.logged('warn', 'arrived after Slack ended it');
        expect(logged).toHaveLength(1);
        expect(JSON.parse(logged[0] as string)).toMatchObject({ executionId, startedMsAgo: STEP_TOKEN_MS });
        expect(logged[0]).not.toContain('xwfp-test-not-a-real-token');
      });

      it('stamped in the future: counted from its receipt', async () => {
        const { job } = await w.insertJob();
        const executionId = await lateStep(job.id, -10 * 60_000);
        expect(deadlineOf(executionId)).toBe(w.clock.at + WAIT_LIMIT_MS);
      });
    });

    it('a store failure is passed on, so Slack delivers the event again', async () => {
      vi.spyOn(w.deps.outbox, 'enqueue').mockRejectedValueOnce(new Error('disk I/O error'));
      await expect(waitStep({ job_id: 3 })).rejects.toThrow('disk I/O error');
    });
  });
});
