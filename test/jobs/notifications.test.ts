import { afterEach, describe, expect, it, vi } from 'vitest';
import { projectOfRecord } from '../../src/config/config.js';
import { notifyChannelFor } from '../../src/config/fields.js';
import { createJobPrivacyChecks } from '../../src/jobs/job-privacy.js';
import {
  channelNotification,
  type NotificationPlace,
  type NotifySettings,
  outcomeNotifications,
  requesterMessage,
} from '../../src/jobs/notifications.js';
import type { JobRecord, NewJob, NewOutboxItem, RunOutcome, RunRecord } from '../../src/store/types.js';
import { blockProblems } from '../helpers/block-kit.js';
import { WORKSPACE_URL } from '../helpers/fake-network.js';
import { jobRecord } from '../helpers/job-record.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';
import { HINTS } from '../helpers/rendering.js';

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

describe('what the notifications say', () => {
  const WORKSPACE = 'https://acme.slack.com';
  const PR = 'https://github.com/acme/docs/pull/7';
  const THREAD =
    'https://acme.slack.com/archives/C0DOCS/p1700000000000200?thread_ts=1700000000.000100&cid=C0DOCS';
  const NEWS: NotificationPlace = { channel: 'C0NEWS', privateJobs: 'outcome-only' };

  const finished = (fields: Partial<JobRecord> = {}) =>
    jobRecord({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      prLink: PR,
      cardTs: '1700000000.000200',
      instruction: 'Document the <!channel> rate limits',
      ...fields,
    });

  describe('channelNotification', () => {
    it('announces a public job: the pull request, its thread, and its words quoted inert', () => {
      expect(channelNotification('completed_pr', finished(), HINTS, WORKSPACE, NEWS).text).toBe(
        [
          `:white_check_mark: The docs agent opened a pull request: *<${PR}|Review the pull request>* · see <${THREAD.replace(/&/g, '&amp;')}|the job’s thread> in <#C0DOCS>`,
          '>Document the @channel rate limits',
        ].join('\n'),
      );
    });

    it('mentions nobody, not even the requester', () => {
      const { text } = channelNotification(
        'failed',
        finished({ lastOutcome: 'failed' }),
        HINTS,
        WORKSPACE,
        NEWS,
      );
      expect(text).toMatch(/^\*Docs agent:\* :x: Failed · see /);
      expect(text).not.toMatch(/<[@!]/);
    });

    it('names the channel alone while the workspace address is unknown', () => {
      const { text } = channelNotification('completed_pr', finished(), HINTS, undefined, NEWS);
      expect(text).toContain('· see its thread in <#C0DOCS>');
      const unthreaded = channelNotification(
        'completed_pr',
        finished({ threadTs: null }),
        HINTS,
        WORKSPACE,
        NEWS,
      );
      expect(unthreaded.text).toContain('· see its thread in <#C0DOCS>');
    });

    it('tells a private job by its outcome only: no words, no link or mention of its place', () => {
      for (const privacy of ['private', 'direct', 'pane', 'unknown'] as const) {
        const job = finished({ privacy, channelId: 'G0SECRET' });
        const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, NEWS);
        expect(text, privacy).toBe(
          `:white_check_mark: The docs agent opened a pull request: *<${PR}|Review the pull request>*\n:lock: Asked for in private, so its words and its thread stay there.`,
        );
      }
    });

    it('quotes a private job’s words when the team chose to, still without its place', () => {
      const job = finished({ privacy: 'private', channelId: 'G0SECRET' });
      const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, {
        ...NEWS,
        privateJobs: 'quote',
      });
      expect(text).toContain(
        ':lock: Asked for in private, so its thread is not linked here:\n>Document the @channel',
      );
      expect(text).not.toContain('G0SECRET');
    });

    it('announces a private job whole in its own conversation', () => {
      const job = finished({ privacy: 'private', channelId: 'G0SECRET' });
      const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, {
        ...NEWS,
        channel: 'G0SECRET',
      });
      expect(text).toContain('in <#G0SECRET>');
      expect(text).toContain('>Document the @channel rate limits');
    });

    it('quotes at most 200 characters of the instruction, and shows an untrusted address inert', () => {
      const job = finished({ instruction: 'i'.repeat(1_000), prLink: 'https://phish.example/pull/1' });
      const { text } = channelNotification('completed_pr', job, HINTS, WORKSPACE, NEWS);
      const quote = text.split('\n').find((l) => l.startsWith('>')) ?? '';
      expect(quote.length).toBeLessThanOrEqual(201);
      expect(text).toContain('*Review the pull request at `https://phish.example/pull/1`*');
    });
  });

  describe('requesterMessage', () => {
    it('introduces the outcome post with a link to its thread, mentioning nobody', () => {
      const dm = requesterMessage('completed_pr', finished(), HINTS, 86_400_000, WORKSPACE);
      const intro = `:bell: News of your docs agent job, also posted in <${THREAD.replace(/&/g, '&amp;')}|the job’s thread> in <#C0DOCS>:`;
      // The outcome follows on its own line, starting with its emoji: the DM mentions nobody.
      const opening = `${intro}\n:white_check_mark: The docs agent finished and opened a pull request:`;
      expect(dm.text.slice(0, opening.length)).toBe(opening);
      expect(dm.text).not.toMatch(/<[@!]/);
      expect(dm.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: intro } });
      expect(blockProblems(dm.blocks, 50)).toEqual([]);
    });

    it('keeps the text within 4,000 characters', () => {
      const job = finished({ prLink: `https://github.com/acme/docs/pull/7?${'q'.repeat(2_900)}` });
      const dm = requesterMessage('completed_pr', job, HINTS, 86_400_000, WORKSPACE);
      expect(dm.text.length).toBeLessThanOrEqual(4_000);
      expect(blockProblems(dm.blocks, 50)).toEqual([]);
    });
  });
});
