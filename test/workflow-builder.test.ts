import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import type { StepCompletion, StepWait } from '../src/delivery/kinds/workflow-step.js';
import { createLogger, createRedactor } from '../src/logging/logger.js';
import { createSlackCaller } from '../src/slack/caller.js';
import { WAIT_LIMIT_MS } from '../src/slack/function-steps.js';
import type { OutboxItem } from '../src/store/types.js';
import { createYieldGate } from '../src/util/yield-gate.js';
import { createWorkflowSteps } from '../src/workflow-builder.js';
import { sleep } from './helpers/http.js';
import { jobRecord } from './helpers/job-record.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from './helpers/slack-stand-in.js';

const POLL_MS = 7_000;
const STEP_TOKEN = 'xwfp-1-test-step-token';

const item = (payload: StepCompletion | StepWait) =>
  ({ id: 9, jobId: 4, attempts: 1, payload }) as unknown as OutboxItem<StepCompletion | StepWait>;

describe('the app’s Workflow Builder answers', () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  async function steps() {
    slack = await startSlackStandIn();
    const gate = createYieldGate();
    const logger = createLogger({ level: 'error', secrets: [], write: () => undefined });
    const built = createWorkflowSteps({
      caller: createSlackCaller({
        client: new WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } }),
        logger,
        redact: createRedactor(['not-a-real-secret']),
      }),
      store: { getJob: async (id) => (id === 4 ? jobRecord({ id: 4, origin: 'workflow' }) : undefined) },
      identity: {
        get: async () => ({
          teamId: 'T0TEST',
          botUserId: 'U0BOT',
          botId: 'B0BOT',
          url: 'https://acme.slack.com/',
        }),
      },
      logger,
      gate,
      config: { poll: { intervalMs: POLL_MS }, prLinkHosts: ['github.com'] },
    });
    return { ...built, gate, slack };
  }

  it('answer a started step with the execution’s own token the completer kept, linking the thread', async () => {
    const { completer, sender, slack } = await steps();
    slack.steps.functionTokens.set(STEP_TOKEN, 'Fx1');
    completer.remember('Fx1', STEP_TOKEN, Date.now());
    const payload: StepCompletion = {
      type: 'complete_step',
      executionId: 'Fx1',
      result: { job: 4, channel: 'C0DOCS', threadTs: '1700000000.000100' },
    };
    expect(await sender.send(item(payload))).toBeUndefined();
    expect(slack.steps.completions).toEqual([
      {
        method: 'functions.completeSuccess',
        executionId: 'Fx1',
        token: 'function',
        outputs: {
          job_id: 4,
          channel_id: 'C0DOCS',
          thread_ts: '1700000000.000100',
          thread_link: 'https://acme.slack.com/archives/C0DOCS/p1700000000000100',
        },
      },
    ]);
  });

  it('hold a step’s answer back while Slack’s requests are in flight, and mask secrets in a reason', async () => {
    const { sender, gate, slack } = await steps();
    const payload: StepCompletion = {
      type: 'complete_step',
      executionId: 'Fx2',
      result: { error: 'the agent API said: key not-a-real-secret refused' },
    };
    gate.requestStarted();
    let answered = false;
    const sending = sender.send(item(payload)).then(() => {
      answered = true;
    });
    // Well inside the gate's hold of a burst (a second): long enough for an unheld answer to arrive.
    await sleep(60);
    expect(answered).toBe(false);
    expect(slack.steps.completions).toEqual([]);
    gate.requestEnded();
    await sending;
    expect(slack.steps.completions).toEqual([
      {
        method: 'functions.completeError',
        executionId: 'Fx2',
        token: 'bot',
        error: 'the agent API said: key [redacted] refused',
      },
    ]);
  });

  it('look at a waited-for job again after one poll interval while it works', async () => {
    const { sender, slack } = await steps();
    const deadline = Date.now() + WAIT_LIMIT_MS;
    const payload: StepWait = { type: 'await_job', executionId: 'Fx3', job: 4, deadline };
    const before = Date.now();
    const delivery = await sender.send(item(payload));
    const laterAt = (delivery as { laterAt: number }).laterAt;
    expect(laterAt).toBeGreaterThanOrEqual(before + POLL_MS);
    expect(laterAt).toBeLessThanOrEqual(Date.now() + POLL_MS);
    expect(slack.steps.completions).toEqual([]);
  });
});
