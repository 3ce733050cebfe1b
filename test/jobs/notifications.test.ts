import { afterEach, describe, expect, it, vi } from 'vitest';
import { notifyChannelFor } from '../../src/config/notify-channels.js';

import { projectOfRecord } from '../../src/config/projects.js';
import { createJobPrivacyChecks } from '../../src/jobs/job-privacy.js';
import { type NotifySettings, outcomeNotifications } from '../../src/jobs/notifications.js';
import type { JobRecord, NewJob, NewOutboxItem, RunOutcome, RunRecord } from '../../src/store/types.js';
import { WORKSPACE_URL } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';

const NOTIFY = 'C0NOTIFY';
const SDK_NOTIFY = 'C0SDKNOTE';
const PR = 'https://github.com/acme/docs/pull/12';

/** The text of the first item queued. */
function textOf(items: NewOutboxItem[]): string {
  const [first] = items;
  if (!first || !('text' in first.payload)) throw new Error('no post queued');
  return String(first.payload.text);
}

let w: JobWorld | undefined;
afterEach(async () => {
  await w?.store.close();
  w = undefined;
});

/** The world with `env`, and the notification settings built from its configuration as the app builds them. */
function setUp(
  env: Record<string, string> = {},
  workspaceUrl: () => Promise<string | undefined> = async () => WORKSPACE_URL,
) {
  const world = createJobWorld({
    CHANNEL_PROJECTS: 'C0SDK:sdk-docs',
    NOTIFY_CHANNEL_ID: `${NOTIFY},${SDK_NOTIFY}:sdk-docs`,
    ...env,
  });
  w = world;
  const { config } = world;
  const notify: NotifySettings = {
    channelFor: (projectId) =>
      notifyChannelFor(config.notify.channels, projectOfRecord(projectId, config.agent.projectId)),
    on: config.notify.on,
    requester: config.notify.requester,
    privateJobs: config.notify.privateJobs,
    workspaceUrl: vi.fn(workspaceUrl),
  };
  const ctx = {
    notify,
    hints: world.hints,
    settings: world.config,
    logger: world.ctx.logger,
    privacy: createJobPrivacyChecks(world.ctx),
  };
  /** The items queued with `outcome`'s post for a job with `fields` whose run ended. */
  const told = async (outcome: RunOutcome, fields: Partial<NewJob> = {}) => {
    const { job, run } = await world.activeJob({ privacy: 'public', ...fields });
    const recorded: JobRecord = { ...job, prLink: outcome === 'completed_pr' ? PR : null };
    return { items: await outcomeNotifications(ctx, outcome, recorded, run as RunRecord), job };
  };
  return { world, notify, ctx, told };
}

describe('outcomeNotifications: the notification channel', () => {
  it('announces a pull request in the project’s channel, once per run', async () => {
    const { told } = setUp();
    const { items, job } = await told('completed_pr');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      jobId: job.id,
      dedupeKey: `notify:1:${job.id}`,
      payload: { type: 'notify', channel: NOTIFY },
    });
    const text = textOf(items);
    expect(text).toContain(PR);
    // The link to the thread, from the workspace address.
    expect(text).toContain(WORKSPACE_URL);
  });

  it('with NOTIFY_ON=pr, announces no other outcome', async () => {
    const { told } = setUp();
    for (const outcome of ['completed_no_changes', 'failed', 'archived'] as const)
      expect((await told(outcome, { channelId: `C0${outcome.length}X` })).items).toEqual([]);
  });

  it('with NOTIFY_ON=all, announces every outcome', async () => {
    const { told } = setUp({ NOTIFY_ON: 'all' });
    const { items } = await told('failed');
    expect(items.map((i) => i.payload)).toMatchObject([{ type: 'notify', channel: NOTIFY }]);
  });

  it('announces in the channel of the job’s own project, and nowhere for a project without one', async () => {
    const { told } = setUp({ NOTIFY_CHANNEL_ID: `${SDK_NOTIFY}:sdk-docs` });
    const sdk = await told('completed_pr', { projectId: 'sdk-docs' });
    expect(sdk.items.map((i) => i.payload)).toMatchObject([{ type: 'notify', channel: SDK_NOTIFY }]);
    expect((await told('completed_pr', { channelId: 'C0OTHER' })).items).toEqual([]);
  });

  it('is told only by outcome of a job whose channel was made private since it was asked', async () => {
    const { told, world } = setUp();
    world.slack.conversationFacts.mockResolvedValue({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: true,
    });
    const { items, job } = await told('completed_pr');
    const text = textOf(items);
    expect(text).toContain('Asked for in private');
    expect(text).not.toContain('Document the rate limits');
    expect(text).not.toContain(CHANNEL);
    expect((await world.job(job.id)).privacy).toBe('private');
  });

  it('asks Slack nothing when the job was asked in the notification channel itself', async () => {
    const { told, world } = setUp();
    const { items } = await told('completed_pr', { channelId: NOTIFY });
    expect(items).toHaveLength(1);
    expect(world.slack.conversationFacts).not.toHaveBeenCalled();
  });

  it('names the channel instead of linking the thread while the workspace address is unknown', async () => {
    const { told, world } = setUp({}, async () => Promise.reject(new Error('auth.test failed')));
    const { items } = await told('completed_pr');
    const text = textOf(items);
    expect(text).toContain(`its thread in <#${CHANNEL}>`);
    expect(world.logs.some((l) => l.includes('workspace address unknown'))).toBe(true);
  });
});

describe('outcomeNotifications: the requester', () => {
  it('with NOTIFY_REQUESTER=dm, tells the requester by direct message, whatever the outcome', async () => {
    const { told } = setUp({ NOTIFY_CHANNEL_ID: '', NOTIFY_REQUESTER: 'dm' });
    const { items, job } = await told('failed');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      dedupeKey: `requester-dm:1:${job.id}`,
      payload: { type: 'direct', user: REQUESTER },
    });
  });

  it('does not tell a requester by direct message of a job asked in a direct message', async () => {
    const { told } = setUp({ NOTIFY_CHANNEL_ID: '', NOTIFY_REQUESTER: 'dm' });
    expect((await told('completed_pr', { channelId: 'D0DIRECT', privacy: 'direct' })).items).toEqual([]);
  });

  it('with both, queues the channel post and the direct message together', async () => {
    const { told } = setUp({ NOTIFY_REQUESTER: 'dm' });
    const { items } = await told('completed_pr');
    expect(items.map((i) => i.payload.type)).toEqual(['notify', 'direct']);
  });

  it('tells nobody, and asks nothing, when notifications are off', async () => {
    const { ctx, notify, world } = setUp();
    const { job, run } = await world.activeJob();
    expect(await outcomeNotifications({ ...ctx, notify: undefined }, 'completed_pr', job, run)).toEqual([]);
    expect(notify.workspaceUrl).not.toHaveBeenCalled();
  });
});
