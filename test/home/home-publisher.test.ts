import { WebClient } from '@slack/web-api';
import { describe, expect, it, vi } from 'vitest';
import { createAccessPolicy } from '../../src/access/access-policy.js';
import { HOME_LIMIT } from '../../src/blocks/job-list.js';
import { readConfig } from '../../src/config/config.js';
import { usage } from '../../src/features/command/wording.js';
import { createHomePublisher, FIGURES_FRESH_MS, type HomePublisher } from '../../src/home/home-publisher.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { createIdentity } from '../../src/slack/identity.js';
import { VALID_ENV } from '../helpers/config.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';
import { HINTS } from '../helpers/rendering.js';
import { BOT_TOKEN } from '../helpers/slack-stand-in.js';

const w = useDeliveryWorld();

/** The publisher as the app builds it, with the access rules of `env`. */
function publisher(env: Record<string, string> = {}, installedTeam?: string): HomePublisher {
  const config = readConfig({ ...VALID_ENV, ...env });
  const client = new WebClient(BOT_TOKEN, { slackApiUrl: w.slack.apiUrl, retryConfig: { retries: 0 } });
  const now = () => w.clock.at;
  const identity = createIdentity(
    createSlackCaller({ client, logger: w.logger, redact: (text) => text }),
    w.logger,
    now,
  );
  // As a signed request from Slack tells it, before auth.test has answered.
  if (installedTeam) identity.noteInstallation(installedTeam);
  const access = createAccessPolicy({
    config: config.access,
    identity,
    slack: w.gateway,
    store: w.store,
    logger: w.logger,
    defaultProject: config.agent.projectId,
    now,
  });
  return createHomePublisher({
    access,
    store: w.store,
    slack: w.gateway,
    identity,
    logger: w.logger,
    hints: HINTS,
    guide: usage,
    config,
    now,
  });
}

/** The texts of the Home tab last published for `userId`, one per block. */
function homeTexts(userId: string): string[] {
  const view = w.slack.homes.get(userId) as {
    blocks: { text?: { text: string }; elements?: { text: string }[] }[];
  };
  return view.blocks.map((b) => b.text?.text ?? b.elements?.map((e) => e.text).join(' ') ?? '');
}

describe('the App Home', () => {
  it('lists the person’s own jobs, linked to their threads, with the guide', async () => {
    await w.job({ threadTs: '1700000000.000100', cardTs: '1700000000.000100', phase: 'active' });
    await w.job({ requesterId: 'U0BOB', instruction: 'Bob’s own request' });
    await publisher().publish('U0ALICE');
    const texts = homeTexts('U0ALICE').join('\n');
    expect(texts).toContain('Your docs agent jobs');
    expect(texts).toContain('Document the retry settings');
    expect(texts).toContain('https://test-team.slack.com/archives/C0DOCS/p1700000000000100');
    expect(texts).not.toContain('Bob’s own request');
    expect(texts).toContain('How to use docs-agent');
    expect(texts).toContain(usage(HINTS));
    expect(w.slack.invalid).toEqual([]);
  });

  it('shows the team how the agent is doing: pull requests per project, feedback with reasons', async () => {
    const { id } = await w.job({ requesterId: 'U0BOB' });
    await w.store.recordFeedbackReason(
      { jobId: id, runSeq: 1, userId: 'U0BOB', reason: 'Wrong page' },
      w.clock.at,
    );
    await publisher().publish('U0ALICE');
    const texts = homeTexts('U0ALICE');
    const at = texts.indexOf('How the agent is doing');
    expect(at).toBeGreaterThan(0);
    expect(texts[at + 1]?.split('\n')).toEqual([
      'No pull requests opened yet.',
      '_Pull requests are not followed to their merge: set GITHUB_TOKEN to follow them._',
      'Feedback on outcomes: :thumbsup: 0  :thumbsdown: 1 (1 said what to fix)',
    ]);
    // With a token, what is not followed is not said to be.
    await publisher({ GITHUB_TOKEN: 'ghp_testTokenNotReal000000000000000000' }).publish('U0ALICE');
    expect(homeTexts('U0ALICE').join('\n')).not.toContain('not followed');
    expect(w.slack.invalid).toEqual([]);
  });

  it('reads the team’s figures at most once a minute, however many Homes it publishes', async () => {
    const summaries = vi.spyOn(w.store, 'pullRequestSummaries');
    const home = publisher();
    await home.publish('U0ALICE');
    await home.publish('U0BOB');
    expect(summaries).toHaveBeenCalledOnce();
    w.clock.at += FIGURES_FRESH_MS;
    await home.publish('U0ALICE');
    expect(summaries).toHaveBeenCalledTimes(2);
    // A read that failed is asked again at the next publish.
    summaries.mockRejectedValueOnce(new Error('store busy'));
    w.clock.at += FIGURES_FRESH_MS;
    await expect(home.publish('U0ALICE')).rejects.toThrow('store busy');
    await home.publish('U0ALICE');
    expect(summaries).toHaveBeenCalledTimes(4);
  });

  it('shows how to start to someone without jobs', async () => {
    await publisher().publish('U0BOB');
    expect(homeTexts('U0BOB').join('\n')).toContain('You have not started any jobs yet');
  });

  it('lists at most the latest jobs that fit', async () => {
    for (let n = 0; n < HOME_LIMIT + 3; n++) await w.job({ instruction: `Request number ${n}` });
    await publisher().publish('U0ALICE');
    const shown = homeTexts('U0ALICE').flatMap((t) => t.match(/Request number (\d+)/)?.[1] ?? []);
    // The newest first; the oldest ones left out.
    expect(shown.map(Number)).toEqual(Array.from({ length: HOME_LIMIT }, (_, i) => HOME_LIMIT + 2 - i));
  });

  it('shows a guest why they cannot use the bot, and none of their jobs', async () => {
    await w.job({ requesterId: 'U0GUEST', instruction: 'A guest’s old request' });
    w.slack.guests.add('U0GUEST');
    await publisher().publish('U0GUEST');
    const texts = homeTexts('U0GUEST');
    expect(texts[0]).toBe('docs-agent');
    expect(texts.join('\n')).not.toContain('A guest’s old request');
    expect(texts).toHaveLength(2);
  });

  it('shows someone not on the allowed list why, and nothing of the jobs', async () => {
    await w.job();
    await publisher({ ALLOWED_USER_IDS: 'U0BOB' }).publish('U0ALICE');
    const texts = homeTexts('U0ALICE').join('\n');
    expect(texts).not.toContain('Document the retry settings');
    expect(texts).not.toContain('Your docs agent jobs');
  });

  it('shows no jobs while it cannot tell which workspace it belongs to', async () => {
    await w.job();
    w.slack.fail('auth.test', { error: 'internal_error' });
    await publisher().publish('U0ALICE');
    const texts = homeTexts('U0ALICE');
    expect(texts[0]).toBe('docs-agent');
    expect(texts.join('\n')).not.toContain('Document the retry settings');
  });

  it('lists the jobs without links when only the workspace’s address is unknown', async () => {
    await w.job({ threadTs: '1700000000.000100', cardTs: '1700000000.000100' });
    w.slack.fail('auth.test', { error: 'internal_error' });
    await publisher({}, 'T0TEST').publish('U0ALICE');
    const texts = homeTexts('U0ALICE').join('\n');
    expect(texts).toContain('Document the retry settings');
    expect(texts).not.toContain('slack.com/archives');
  });

  it('fails a publish Slack refused, so the caller can tell', async () => {
    w.slack.fail('views.publish', { error: 'ratelimited' });
    await expect(publisher().publish('U0ALICE')).rejects.toMatchObject({ code: 'ratelimited' });
  });
});

describe('refreshing the App Home after a job changed', () => {
  it('leaves alone someone who never opened it: no Slack call spent on them', async () => {
    await w.job();
    await publisher().refresh('U0ALICE');
    expect(w.slack.callsTo('views.publish')).toEqual([]);
    expect(w.slack.homes.size).toBe(0);
  });

  it('publishes it again for someone who opened it', async () => {
    await w.store.recordHomeOpened('U0ALICE', 'T0TEST', w.clock.at);
    await w.job();
    await publisher().refresh('U0ALICE');
    expect(w.slack.callsTo('views.publish')).toHaveLength(1);
    expect(homeTexts('U0ALICE').join('\n')).toContain('Document the retry settings');
  });

  it('never fails what triggered it: a refused publish is only warned about', async () => {
    await w.store.recordHomeOpened('U0ALICE', 'T0TEST', w.clock.at);
    w.slack.fail('views.publish', { error: 'invalid_auth' });
    await expect(publisher().refresh('U0ALICE')).resolves.toBeUndefined();
    expect(w.logged('could not refresh the App Home')).toHaveLength(1);
    expect(w.slack.homes.size).toBe(0);
  });
});
