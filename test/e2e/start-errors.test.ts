import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { slashCommand } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';

const h = useHarness();

const rootOf = () => waitFor('root', () => h.slack.messages.find((m) => !m.thread_ts));

describe('when the agent API refuses to create the job', () => {
  it('429 tells the requester the hourly limit is reached, with the reset time', async () => {
    const reset = Math.floor(Date.now() / 1000) + 1800;
    h.agent.fail('create', { status: 429, headers: { 'retry-after': '1800' }, body: 'Too Many Requests' });
    await h.command();
    const root = await rootOf();
    const post = await waitFor('explanation', () => h.slack.threadPosts(root.ts)[0]);
    expect(post.text).toContain('<@U0ALICE>');
    expect(post.text).toContain('hourly limit');
    const epoch = Number(post.text.match(/<!date\^(\d+)\^/)?.[1]);
    expect(Math.abs(epoch - reset)).toBeLessThan(5);
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    await waitFor('root says not started', () =>
      h.slack.messages.find((m) => m.ts === root.ts)?.text.includes('Not started'),
    );
  });

  it('401 says the key is refused, logs loudly, and is not retried', async () => {
    h.agent.fail('create', { status: 401, body: JSON.stringify({ error: 'Invalid API key' }) });
    await h.command();
    const root = await rootOf();
    const post = await waitFor('explanation', () => h.slack.threadPosts(root.ts)[0]);
    expect(post.text).toContain('refused this bot');
    expect(post.text).toContain('admin');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect(h.logs.some((l) => l.includes('"level":"error"') && l.includes('DOCS_AGENT_API_KEY'))).toBe(true);
  });

  it('400 passes on the API explanation', async () => {
    h.agent.fail('create', {
      status: 400,
      body: JSON.stringify({ error: 'Prompt contains unsupported characters' }),
    });
    await h.command();
    const root = await rootOf();
    const post = await waitFor('explanation', () => h.slack.threadPosts(root.ts)[0]);
    expect(post.text).toContain('Prompt contains unsupported characters');
  });

  it('500 is never retried and is reported honestly as unknown', async () => {
    h.agent.fail('create', { status: 500 });
    await h.command();
    const root = await rootOf();
    const post = await waitFor('explanation', () => h.slack.threadPosts(root.ts)[0]);
    expect(post.text).toContain('cannot tell whether the job started');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    const job = await h.app.store.findJobByThread(root.channel, root.ts);
    expect(job?.phase).toBe('start_unknown');
  });

  it('503 is retried, because the request surely had no effect', async () => {
    h.agent.fail('create', { status: 503 });
    await h.command();
    const root = await rootOf();
    await waitFor(
      'job active',
      async () => (await h.app.store.findJobByThread(root.channel, root.ts))?.phase === 'active',
    );
    expect(h.agent.requestsFor('create')).toHaveLength(2);
  });
});

describe('when the bot cannot post in the channel', () => {
  it.each(['not_in_channel', 'channel_not_found'])(
    '%s: tells the user privately how to fix it; no job',
    async (error) => {
      h.slack.fail('chat.postMessage', { error });
      const res = await h.command({ channel_id: 'C0PRIVATE', response_url: h.slack.responseUrl('r1') });
      expect(res.status).toBe(200);
      const reply = await waitFor('private reply', () => h.slack.responses[0]);
      expect(reply.path).toBe('/respond/r1');
      expect(reply.body.response_type).toBe('ephemeral');
      expect(String(reply.body.text)).toContain('/invite @docs-agent');
      await h.settled();
      expect(h.agent.requestsFor('create')).toHaveLength(0);
    },
  );

  it('in a direct message: says to use a channel or the Messages tab, privately, and starts nothing', async () => {
    const res = await h.command({ channel_id: 'D0DIRECT', channel_name: 'directmessage' });
    const body = (await res.json()) as { response_type: string; text: string };
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toContain('Run it in a channel I am in');
    expect(body.text).toContain('send me the instruction as a message in my Messages tab');
    await h.settled();
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.agent.requests).toHaveLength(0);
  });

  it('when the answer to the root post is lost, finds the root in Slack and carries on with one root', async () => {
    h.slack.fail('chat.postMessage', { acceptThenHang: true });
    await h.command();
    await waitFor('job created', () => h.agent.requestsFor('create').length === 1);
    expect(h.slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(h.slack.callsTo('conversations.history').length).toBeGreaterThan(0);
  });

  it('falls back to a private message in the channel once the response_url has expired', async () => {
    h.slack.fail('chat.postMessage', { error: 'is_archived' });
    await h.command({ response_url: h.slack.responseUrl('expired-1'), channel_id: 'C0ARCHIVED' });
    const eph = await waitFor('ephemeral', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(eph.args).toMatchObject({ channel: 'C0ARCHIVED', user: 'U0ALICE' });
    expect(String(eph.args.text)).toContain('is_archived');
  });

  it('a Slack outage while posting the root: the user is told, no job', async () => {
    h.slack.fail('chat.postMessage', { status: 500 }, { status: 500 }, { status: 500 });
    await h.command({ response_url: h.slack.responseUrl('r2') });
    const reply = await waitFor('private reply', () => h.slack.responses[0], 8_000);
    expect(String(reply.body.text)).toContain('no job was started');
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });
});

describe('request authenticity', () => {
  it('rejects a bad signature with 401 and creates nothing', async () => {
    const res = await postSigned(h.base(), slashCommand(), { secret: 'not-the-secret' });
    expect(res.status).toBe(401);
    await h.settled();
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('rejects a stale timestamp with 401 and creates nothing', async () => {
    const res = await postSigned(h.base(), slashCommand(), {
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    expect(res.status).toBe(401);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('rejects a request with no signature', async () => {
    const res = await fetch(`${h.base()}/slack/events`, { method: 'POST', body: slashCommand() });
    expect(res.status).toBe(401);
  });

  it('never starts two jobs for one command delivered twice', async () => {
    const body = slashCommand({ response_url: h.slack.responseUrl('dup') });
    await postSigned(h.base(), body);
    await postSigned(h.base(), body);
    await waitFor('create', () => h.agent.requestsFor('create').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect(h.slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
  });
});

describe('health', () => {
  it('answers 200 on /healthz once ready', async () => {
    const res = await fetch(`${h.base()}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('secrets', () => {
  it('never writes a token, the signing secret or the admin key to a log line or Slack', async () => {
    h.agent.fail('create', { status: 401, body: JSON.stringify({ error: 'bad key mint_test_key' }) });
    await h.command();
    const root = await rootOf();
    await waitFor('explanation', () => h.slack.threadPosts(root.ts)[0]);
    const everything = [
      ...h.logs,
      ...h.slack.messages.map((m) => `${m.text} ${JSON.stringify(m.metadata ?? {})}`),
      ...h.slack.calls.map((c) => JSON.stringify(c.args)),
    ].join('\n');
    expect(h.logs.length).toBeGreaterThan(5);
    for (const secret of ['xoxb-test-token', 'test-signing-secret-0000', 'mint_test_key']) {
      expect(everything).not.toContain(secret);
    }
  });
});
