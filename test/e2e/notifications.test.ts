import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { PROJECT_ID } from '../helpers/agent-stand-in.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import type { StoredMessage } from '../helpers/slack-stand-in.js';

const PR = 'https://github.com/example/docs/pull/7';
const inChannel = (h: Harness, channel: string): StoredMessage[] =>
  h.slack.messages.filter((m) => m.channel === channel);
const keyOf = (m: StoredMessage | undefined) => m?.metadata?.event_payload.key;
/** The outbox rows of one kind, as the store file has them (read through a second connection). */
function outboxRows(h: Harness, kind: string) {
  const db = new Database(h.config.databasePath, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        'SELECT dedupe_key, delivered_at, dead_at, last_error, attempts FROM outbox WHERE kind = ? ORDER BY id',
      )
      .all(kind) as {
      dedupe_key: string;
      delivered_at: number | null;
      dead_at: number | null;
      last_error: string | null;
      attempts: number;
    }[];
  } finally {
    db.close();
  }
}

describe('a notification channel (NOTIFY_CHANNEL_ID)', () => {
  const h = useHarness({ NOTIFY_CHANNEL_ID: 'C0NEWS' });

  it('gets one short post linking the pull request and the job’s thread when a run opens one', async () => {
    const { threadTs, jobId } = await h.startJob({
      text: 'Add a quickstart <!channel> <https://evil.example|click>',
    });
    h.agent.complete(jobId, PR);
    const post = await waitFor('notification', () => inChannel(h, 'C0NEWS')[0]);
    await waitFor('thread outcome', () => h.slack.threadPosts(threadTs)[0]);
    await h.settled();

    expect(inChannel(h, 'C0NEWS')).toHaveLength(1);
    expect(post.thread_ts).toBeUndefined();
    expect(post.text).toContain(`<${PR}|Review the pull request>`);
    expect(post.text).toContain(
      `<https://test-team.slack.com/archives/C0GENERAL/p${threadTs.replace('.', '')}|the job’s thread>`,
    );
    expect(post.text).toContain('<#C0GENERAL>');
    // The instruction is quoted inert: no notification, no hidden link.
    expect(post.text).not.toContain('<!channel>');
    expect(post.text).not.toContain('<https://evil.example');
    expect(post.metadata).toEqual({
      event_type: 'docs_agent_notification',
      event_payload: { key: 'notify:1:1', run: 1, outcome: 'completed_pr', thread: threadTs },
    });
    // Nobody is mentioned there: the people involved are told in the thread.
    expect(post.text).not.toContain('<@');
    expect(outboxRows(h, 'notify')).toMatchObject([{ dedupe_key: 'notify:1:1', dead_at: null }]);
  });

  it('stays quiet about runs that opened no pull request', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.complete(jobId, null);
    await waitFor('thread outcome', () => h.slack.threadPosts(threadTs)[0]);
    await h.settled();
    expect(inChannel(h, 'C0NEWS')).toEqual([]);
    expect(outboxRows(h, 'notify')).toEqual([]);
  });

  it('posts once when Slack took the post but its answer was lost', async () => {
    h.slack.failIf('chat.postMessage', (a) => a.channel === 'C0NEWS', { acceptThenHang: true });
    const { jobId } = await h.startJob();
    h.agent.complete(jobId, PR);
    await waitFor('delivered', () => outboxRows(h, 'notify')[0]?.delivered_at);
    await h.settled();
    expect(inChannel(h, 'C0NEWS')).toHaveLength(1);
    expect(outboxRows(h, 'notify')[0]?.attempts).toBe(2);
    // The second attempt looked for the first one's post before posting.
    expect(h.slack.callsTo('conversations.history').some((c) => c.args.channel === 'C0NEWS')).toBe(true);
  });

  it('gives the notification up, warning once, when the bot is not in the channel', async () => {
    h.slack.failIf('chat.postMessage', (a) => a.channel === 'C0NEWS', { error: 'not_in_channel' }, 10);
    for (const n of [1, 2]) {
      const { threadTs, jobId } = await h.startJob({ text: `Add a quickstart ${n}` });
      h.agent.complete(jobId, PR);
      await waitFor('thread outcome', () => h.slack.threadPosts(threadTs)[0]);
      await waitFor('given up', () => outboxRows(h, 'notify')[n - 1]?.dead_at);
    }
    await h.settled();
    expect(outboxRows(h, 'notify').map((r) => [r.last_error, r.attempts])).toEqual([
      ['not_in_channel', 1],
      ['not_in_channel', 1],
    ]);
    const warnings = h.logs.filter((l) => l.includes('cannot post in the notification channel'));
    expect(warnings.filter((l) => l.includes('"level":"warn"'))).toHaveLength(1);
    expect(warnings[0]).toContain('"channel":"C0NEWS"');
    expect(h.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });
});

describe('NOTIFY_ON=all', () => {
  const h = useHarness({ NOTIFY_CHANNEL_ID: 'C0NEWS', NOTIFY_ON: 'all' });

  it('announces every outcome, a failure included', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'failed');
    const post = await waitFor('notification', () => inChannel(h, 'C0NEWS')[0]);
    expect(post.text).toContain(':x: Failed');
    expect(post.text).toContain(threadTs.replace('.', ''));
    expect(post.metadata?.event_payload).toMatchObject({ outcome: 'failed', run: 1 });
  });
});

describe('notification channels per project', () => {
  const h = useHarness(
    { CHANNEL_PROJECTS: 'C0SDK:sdk-docs', NOTIFY_CHANNEL_ID: `C0SDKNEWS:sdk-docs,C0NEWS:${PROJECT_ID}` },
    { projects: [PROJECT_ID, 'sdk-docs'] },
  );

  it('announce a job in its own project’s channel', async () => {
    const sdk = await h.startJob({ channel_id: 'C0SDK', text: 'Document the SDK' });
    h.agent.complete(sdk.jobId, PR);
    const post = await waitFor('sdk notification', () => inChannel(h, 'C0SDKNEWS')[0]);
    expect(post.text).toContain('<#C0SDK>');
    const other = await h.startJob({ text: 'Document the API' });
    h.agent.complete(other.jobId, PR);
    await waitFor('default notification', () => inChannel(h, 'C0NEWS')[0]);
    await h.settled();
    expect(inChannel(h, 'C0SDKNEWS')).toHaveLength(1);
    expect(inChannel(h, 'C0NEWS')).toHaveLength(1);
  });
});

describe('NOTIFY_REQUESTER=dm', () => {
  const h = useHarness({ NOTIFY_REQUESTER: 'dm' });

  it('sends the requester the outcome by direct message, besides the thread', async () => {
    const { threadTs, jobId } = await h.startJob({ user_id: 'U0ALICE' });
    h.agent.complete(jobId, null);
    const dm = await waitFor('direct message', () => inChannel(h, 'D0ALICE')[0]);
    await waitFor('thread outcome', () => h.slack.threadPosts(threadTs)[0]);
    await h.settled();
    expect(h.slack.callsTo('conversations.open').map((c) => c.args.users)).toEqual(['U0ALICE']);
    expect(inChannel(h, 'D0ALICE')).toHaveLength(1);
    expect(dm.text).toContain('without changing any files');
    expect(dm.text).toContain('the job’s thread>');
    expect(keyOf(dm)).toBe('requester-dm:1:1');
    expect(dm.metadata?.event_type).toBe('docs_agent_notification');
    // No notification channel is set: nothing else is posted.
    expect(h.slack.messages.filter((m) => !m.thread_ts && m.channel !== 'D0ALICE')).toHaveLength(1);
  });

  it('sends it once when Slack took the message but its answer was lost', async () => {
    h.slack.failIf('chat.postMessage', (a) => a.channel === 'D0ALICE', { acceptThenHang: true });
    const { jobId } = await h.startJob({ user_id: 'U0ALICE' });
    h.agent.complete(jobId, PR);
    await waitFor('delivered', () => outboxRows(h, 'direct')[0]?.delivered_at);
    await h.settled();
    expect(inChannel(h, 'D0ALICE')).toHaveLength(1);
    expect(inChannel(h, 'D0ALICE')[0]?.blocks?.some((b) => b.type === 'actions')).toBe(true);
    expect(outboxRows(h, 'direct')[0]?.attempts).toBe(2);
  });

  it('gives the DM up, warning once, when Slack cannot open one with the requester', async () => {
    h.slack.fail('conversations.open', { error: 'user_disabled' });
    const { threadTs, jobId } = await h.startJob({ user_id: 'U0ALICE' });
    h.agent.complete(jobId, PR);
    await waitFor('given up', () => outboxRows(h, 'direct')[0]?.dead_at);
    await waitFor('thread outcome', () => h.slack.threadPosts(threadTs)[0]);
    await h.settled();
    expect(outboxRows(h, 'direct').map((r) => [r.last_error, r.attempts])).toEqual([['user_disabled', 1]]);
    expect(inChannel(h, 'D0ALICE')).toEqual([]);
    const warning = h.logs.find((l) => l.includes('cannot send the requester a direct message'));
    expect(warning).toContain('"level":"warn"');
    expect(warning).toContain('"user":"U0ALICE"');
  });
});
