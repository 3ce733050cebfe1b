import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

const h = useHarness({ CHANNEL_PROJECTS: 'C0API:api-docs' }, { projects: ['proj_test', 'api-docs'] });

/** A slash command's immediate answer (the acknowledgement body). */
async function answer(text: string, fields: Record<string, string> = {}) {
  const res = await h.command({ text, ...fields });
  expect(res.status).toBe(200);
  return (await res.json()) as { response_type: string; text: string; blocks?: unknown[] };
}

describe('/docs-agent list, status and help, and the App Home', () => {
  it('lists the user’s recent jobs with status, age, thread permalinks and pull requests', async () => {
    const first = await h.startJob({ text: 'Document retries' });
    h.agent.complete(first.jobId, 'https://github.com/example/docs/pull/11');
    await waitFor('outcome', () => h.slack.threadPosts(first.threadTs)[0]);
    const second = await h.startJob({ text: 'Fix the <https://x.test|auth> page' });
    await h.startJob({ text: 'Someone else’s job', user_id: 'U0BOB' });

    const body = await answer('list');
    expect(body.response_type).toBe('ephemeral');
    const lines = body.text.split('\n');
    expect(lines[0]).toBe('Your recent docs agent jobs:');
    const permalink = (ts: string) =>
      `https://test-team.slack.com/archives/C0GENERAL/p${ts.replace('.', '')}`;
    // Newest first; the label is plain text; the thread and the pull request are links.
    expect(body.text).toContain(`*<${permalink(second.threadTs)}|Fix the auth (https://x.test) page>*`);
    expect(body.text).toContain(`*<${permalink(first.threadTs)}|Document retries>*`);
    expect(body.text.indexOf('Fix the auth')).toBeLessThan(body.text.indexOf('Document retries'));
    expect(body.text).toContain('<https://github.com/example/docs/pull/11|pull request>');
    expect(body.text).toMatch(
      /Done: <https:\/\/github.com\/example\/docs\/pull\/11\|pull request> · <#C0GENERAL> · \d+ seconds? ago/,
    );
    expect(body.text).not.toContain('Someone else');
    expect(body.blocks?.length).toBeGreaterThanOrEqual(3);

    const channel = await answer('list channel');
    expect(channel.text).toContain('Recent docs agent jobs in <#C0GENERAL>');
    expect(channel.text).toContain('Someone else');
    const elsewhere = await answer('list channel', { channel_id: 'C0EMPTY' });
    expect(elsewhere.text).toContain('No docs agent jobs have been started in this channel yet');
    const nobody = await answer('list', { user_id: 'U0NEW' });
    expect(nobody.text).toContain('You have not started any docs agent jobs yet');
    expect(h.agent.requestsFor('create')).toHaveLength(3);
  });

  it('reports each project’s agent quota from the store, and the bot’s health', async () => {
    await h.startJob({ text: 'One' });
    const other = await h.startJob({ text: 'Two' });
    await h.event({ channel: other.channel, thread_ts: other.threadTs, text: 'and three' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.startJob({ text: 'API four', channel_id: 'C0API' });

    const body = await answer('status');
    expect(body.text).toContain('`proj_test`: 3 of 100 instructions used in the last hour (97 left)');
    expect(body.text).toContain('`api-docs`: 1 of 100 instructions used in the last hour (99 left)');
    expect(body.text).toContain('*Poller:* :large_green_circle: running, watching 3 active jobs');
    expect(body.text).toMatch(/\*Last successful agent API call:\* :large_green_circle: \d+ seconds? ago/);
    expect(h.agent.requestsFor('create')).toHaveLength(3);
  });

  it('answers help with every way to use the bot, and starts nothing', async () => {
    const body = await answer('help');
    for (const part of [
      '/docs-agent &lt;instruction&gt;',
      '@docs-agent &lt;instruction&gt;',
      'Send to docs agent',
      '`//`',
      'list channel',
      'status',
    ])
      expect(body.text).toContain(part);
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('publishes the App Home on app_home_opened and refreshes it when a job changes', async () => {
    const { jobId, threadTs } = await h.startJob({ text: 'Document pagination' });
    const res = await h.anyEvent({
      type: 'app_home_opened',
      user: 'U0ALICE',
      channel: 'D0ALICE',
      tab: 'home',
    });
    expect(res.status).toBe(200);
    const home = await waitFor('home published', () => h.slack.homes.get('U0ALICE'));
    expect(home.type).toBe('home');
    const text = JSON.stringify(home.blocks);
    expect(text).toContain('Document pagination');
    expect(text).toContain('How to use docs-agent');
    expect(text).not.toContain('pull/21');

    h.agent.complete(jobId, 'https://github.com/example/docs/pull/21');
    await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    await waitFor('home refreshed', () =>
      JSON.stringify(h.slack.homes.get('U0ALICE')?.blocks).includes('pull/21'),
    );
    // Someone who never opened the Home tab gets no publish.
    await h.startJob({ text: 'Bob’s job', user_id: 'U0BOB' });
    expect(h.slack.homes.has('U0BOB')).toBe(false);
    // The Messages tab raises the same event: nothing to publish.
    const before = h.slack.callsTo('views.publish').length;
    await h.anyEvent({ type: 'app_home_opened', user: 'U0BOB', channel: 'D0BOB', tab: 'messages' });
    await new Promise((r) => setTimeout(r, 100));
    expect(h.slack.callsTo('views.publish').length).toBe(before);
  });

  it('starts jobs in a mapped channel on its own documentation project', async () => {
    const { jobId, threadTs } = await h.startJob({ text: 'API change', channel_id: 'C0API' });
    expect(h.agent.requestsFor('create')[0]?.projectId).toBe('api-docs');
    await waitFor('polled on its project', () => h.agent.requestsFor('get').some((r) => r.jobId === jobId));
    expect(h.agent.requestsFor('get').every((r) => r.projectId === 'api-docs')).toBe(true);
    await h.event({ channel: 'C0API', thread_ts: threadTs, text: 'also the changelog' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.projectId).toBe('api-docs');
    await h.startJob({ text: 'Elsewhere' });
    expect(h.agent.requestsFor('create')[1]?.projectId).toBe('proj_test');
  });
});
