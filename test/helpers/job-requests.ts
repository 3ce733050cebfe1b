/**
 * The requests the listeners hand to their recording, with the test workspace's values; each
 * builder takes the fields a test cares about. And each place a job starts from, recording
 * through a job kernel as its listener does.
 */

import { afterEach, beforeEach } from 'vitest';
import { recordCommand, type StartRequest } from '../../src/features/command/record.js';
import { type DirectRequest, recordDirect, recordMention } from '../../src/features/messages/record.js';
import { recordShortcut, type ShortcutRequest } from '../../src/features/shortcut/record.js';
import { recordStep, type StepRequest } from '../../src/features/workflow-steps/record.js';
import { type MetricsHooks, noMetrics } from '../../src/jobs/metrics-hooks.js';
import type { MentionRequest, ReplyRequest } from '../../src/jobs/requests.js';
import { createJobRecording, type JobRecording } from '../../src/jobs/start/accept.js';
import { TEAM } from './fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from './job-world.js';

/**
 * The job kernel's recording of new jobs in the world `w`: with `acceptReply`, that recording
 * alone, a message in a thread with a job handed to it; without, the job service's own (whose
 * replies take that message).
 */
export function jobRecording(
  w: Pick<JobWorld, 'ctx' | 'service'>,
  acceptReply?: (request: ReplyRequest) => Promise<number | undefined>,
): JobRecording {
  return acceptReply ? createJobRecording(w.ctx, acceptReply) : w.service();
}

/**
 * The recording of each place a job starts from, on `jobs` (a job service, or the kernel's
 * recording alone) in the world `w`: what each listener calls before Slack is acknowledged.
 */
export function recordingOf(
  jobs: JobRecording,
  w: Pick<JobWorld, 'ctx' | 'config'>,
  metrics: Pick<MetricsHooks, 'instruction'> = noMetrics,
) {
  const deps = { jobs, logger: w.ctx.logger, metrics, config: w.config, outbox: w.ctx, now: w.ctx.now };
  return {
    command: (request: StartRequest) => recordCommand(deps, request),
    mention: (request: MentionRequest) => recordMention(deps, request),
    direct: (request: DirectRequest) => recordDirect(deps, request),
    shortcut: (request: ShortcutRequest) => recordShortcut(deps, request),
    step: (request: StepRequest) => recordStep(deps, request),
  };
}

/**
 * For the tests of one place a job starts from: a fresh job world before each test (`t.w`) and
 * the recording of every place on its job service (`t.record`), the store closed after it.
 */
export function recordingWorld() {
  const t = {} as { w: JobWorld; record: ReturnType<typeof recordingOf> };
  beforeEach(() => {
    t.w = createJobWorld();
    t.record = recordingOf(jobRecording(t.w), t.w);
  });
  afterEach(() => t.w.store.close());
  return t;
}

/** A slash command. */
export const startRequest = (fields: Partial<StartRequest> = {}): StartRequest => ({
  teamId: TEAM,
  channelId: CHANNEL,
  userId: REQUESTER,
  text: 'Document the rate limits',
  triggerId: 'trigger-1',
  responseUrl: 'https://hooks.slack.test/commands/1',
  ...fields,
});

/** A mention of the bot in a channel (or, with a `D…` channel, a direct message). */
export const mentionRequest = (fields: Partial<MentionRequest> = {}): MentionRequest => ({
  teamId: TEAM,
  channelId: CHANNEL,
  userId: REQUESTER,
  text: 'Document the rate limits',
  messageTs: '1700000100.000100',
  threadTs: undefined,
  ...fields,
});

/** A workflow step's run. */
export const stepRequest = (fields: Partial<StepRequest> = {}): StepRequest => ({
  teamId: TEAM,
  userId: REQUESTER,
  channelId: CHANNEL,
  threadTs: undefined,
  instruction: 'Document the rate limits',
  projectId: undefined,
  executionId: 'Fx0TESTEXEC1',
  ...fields,
});

/** The message shortcut's form, submitted on a message in the channel. */
export const shortcutRequest = (fields: Partial<ShortcutRequest> = {}): ShortcutRequest => ({
  teamId: TEAM,
  userId: REQUESTER,
  channelId: CHANNEL,
  instruction: 'Turn this into a guide',
  message: { channelId: CHANNEL, ts: '1700000200.000200', threadTs: undefined, text: 'How?', author: 'Ada' },
  permalink: undefined,
  viewId: 'V0TEST1',
  ...fields,
});

/** A command whose text needs cleaning (Slack's link syntax, an escape, spaces around it). */
export const sampleCommand = (fields: Partial<StartRequest> = {}): StartRequest =>
  startRequest({
    text: '  Document the <https://example.com/limits|rate limits> &amp; quotas  ',
    responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/test',
    ...fields,
  });

/** The shortcut used on a message of the channel with a question in it, with its permalink. */
export const sampleShortcut = (fields: Partial<ShortcutRequest> = {}): ShortcutRequest =>
  shortcutRequest({
    message: {
      channelId: CHANNEL,
      ts: '1700000200.000200',
      threadTs: undefined,
      text: 'How do I rotate keys?',
      author: 'Ada',
    },
    permalink: 'https://example-test.slack.com/archives/C0TEST/p1700000200000200',
    ...fields,
  });
