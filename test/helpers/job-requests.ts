/**
 * The requests the listeners hand to the job service, with the test workspace's values; each
 * builder takes the fields a test cares about.
 */
import type { MentionRequest, ShortcutRequest, StartRequest, StepRequest } from '../../src/jobs/requests.js';
import { TEAM } from './fake-network.js';
import { CHANNEL, REQUESTER } from './job-world.js';

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
