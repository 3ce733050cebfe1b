import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appHomeOpened } from '../../../src/features/app-home/listener.js';
import { TEAM } from '../../helpers/fake-network.js';
import { REQUESTER, T0 } from '../../helpers/job-world.js';
import { boltExtras, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof appHomeOpened>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

function opened(fields: Record<string, unknown> = {}) {
  const event = { type: 'app_home_opened', user: REQUESTER, channel: 'D0HOME', tab: 'home', ...fields };
  return appHomeOpened(w.deps)({
    event,
    body: { team_id: TEAM, event },
    context: {},
    say: vi.fn(),
    ...boltExtras(),
  } as unknown as Args);
}

describe('app_home_opened', () => {
  it('publishes the person’s jobs and remembers the visit, so job changes refresh it', async () => {
    await w.insertJob({}, 'Document the rate limits');
    await opened();
    await w.idle();
    expect(await w.store.homeOpened(REQUESTER)).toBe(true);
    expect(w.slack.publishHome).toHaveBeenCalledOnce();
    expect(w.slack.publishHome.mock.calls[0]?.[0]).toBe(REQUESTER);
    expect(JSON.stringify(w.slack.publishHome.mock.calls[0]?.[1])).toContain('Document the rate limits');
    const row = w.store.db.prepare('SELECT team_id AS teamId, opened_at AS at FROM home_views').get();
    expect(row).toEqual({ teamId: TEAM, at: expect.any(Number) });
    expect((row as { at: number }).at).toBeGreaterThanOrEqual(T0);
  });

  it('publishes nothing for a person who is not a user id', async () => {
    await opened({ user: 'U0ALICE <!here>' });
    await w.idle();
    expect(w.slack.publishHome).not.toHaveBeenCalled();
    expect(await w.store.homeOpened('U0ALICE <!here>')).toBe(false);
  });

  it('shows someone who may not use the bot why, and none of the jobs', async () => {
    await w.stop();
    w = createListenerWorld({ ALLOWED_USER_IDS: 'U0SOMEONEELSE' });
    await w.insertJob({}, 'Document the rate limits');
    await opened();
    await w.idle();
    const view = JSON.stringify(w.slack.publishHome.mock.calls[0]?.[1]);
    expect(view).toContain('not on the list of people');
    expect(view).not.toContain('Document the rate limits');
  });

  it('publishes nothing for the Messages tab, and shows its suggested prompts (agent messaging)', async () => {
    await opened({ tab: 'messages' });
    await w.idle();
    expect(w.slack.publishHome).not.toHaveBeenCalled();
    expect(await w.store.homeOpened(REQUESTER)).toBe(false);
    expect(w.slack.assistantThread).toHaveBeenCalledOnce();
    const [args] = w.slack.assistantThread.mock.calls[0] ?? [];
    expect(args).toEqual({ channel: 'D0HOME', prompts: w.deps.config.suggestedPrompts });
    expect(w.deps.config.suggestedPrompts.length).toBeGreaterThan(0);
  });

  it.each([
    ['the About tab', { tab: 'about' }],
    ['an event with no user', { user: undefined }],
  ])('publishes nothing for %s', async (_what, fields) => {
    await opened(fields);
    await w.idle();
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    expect(w.slack.publishHome).not.toHaveBeenCalled();
    expect(await w.store.homeOpened(REQUESTER)).toBe(false);
  });

  it('answers at once: publishing happens in the background', async () => {
    let release = () => {};
    w.slack.publishHome.mockImplementationOnce(() => new Promise<void>((r) => (release = r)));
    // The listener returns while the publication is still waiting for Slack.
    await opened();
    expect(w.deps.tasks.run).toHaveBeenCalledWith('publish App Home', expect.any(Function));
    await vi.waitFor(() => expect(w.slack.publishHome).toHaveBeenCalled());
    release();
    await w.idle();
    expect(w.slack.publishHome).toHaveBeenCalledOnce();
  });
});
