import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

let h: Harness;
afterEach(async () => {
  await h.stop();
});

/** Sends a command and returns the private answer it got through its response_url. */
async function refusedCommand(fields: Parameters<Harness['command']>[0]) {
  const id = `r${Math.random().toString(36).slice(2)}`;
  const res = await h.command({ response_url: h.slack.responseUrl(id), ...fields });
  expect(res.status).toBe(200);
  const reply = await waitFor('private answer', () =>
    h.slack.responses.find((r) => r.path === `/respond/${id}`),
  );
  expect(reply.body.response_type).toBe('ephemeral');
  return String(reply.body.text);
}

describe('access rules', () => {
  it('refuses channels outside ALLOWED_CHANNEL_IDS, privately, sending nothing upstream', async () => {
    h = await startHarness({ ALLOWED_CHANNEL_IDS: 'C0DOCS, C0WRITERS' });
    expect(await refusedCommand({ channel_id: 'C0GENERAL' })).toContain('not enabled in this channel');
    await h.settled();
    expect(h.agent.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    await h.startJob({ channel_id: 'C0DOCS' });
  });

  it('refuses people outside ALLOWED_USER_IDS, for commands and follow-ups', async () => {
    h = await startHarness({ ALLOWED_USER_IDS: 'U0ALICE' });
    expect(await refusedCommand({ user_id: 'U0MALLORY' })).toContain('not on the list');
    const { channel, threadTs } = await h.startJob({ user_id: 'U0ALICE' });
    await h.event({ channel, thread_ts: threadTs, user: 'U0MALLORY', text: 'delete everything' });
    const eph = await waitFor('private refusal', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(eph.args).toMatchObject({ user: 'U0MALLORY', channel, thread_ts: threadTs });
    expect(String(eph.args.text)).toContain('not on the list');
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });

  it('refuses guests unless ALLOW_GUESTS=true', async () => {
    h = await startHarness();
    h.slack.guests.add('U0GUEST');
    h.slack.singleChannelGuests.add('U0SINGLE');
    expect(await refusedCommand({ user_id: 'U0GUEST' })).toContain('Guest accounts');
    expect(await refusedCommand({ user_id: 'U0SINGLE' })).toContain('Guest accounts');
    expect(h.agent.requests).toHaveLength(0);
    await h.stop();

    h = await startHarness({ ALLOW_GUESTS: 'true' });
    h.slack.guests.add('U0GUEST');
    await h.startJob({ user_id: 'U0GUEST' });
    expect(h.slack.callsTo('users.info')).toHaveLength(0);
  });

  it('looks an account up once and caches it', async () => {
    h = await startHarness();
    await h.startJob({ text: 'first one' });
    await h.startJob({ text: 'second one' });
    expect(h.slack.callsTo('users.info')).toHaveLength(1);
  });

  it('limits instructions per person per hour and says when to try again', async () => {
    h = await startHarness({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '2' });
    const { channel, threadTs } = await h.startJob({ text: 'first one' });
    await h.event({ channel, thread_ts: threadTs, text: 'second one' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    const before = Date.now();
    const answer = await refusedCommand({ text: 'third one' });
    expect(answer).toContain('2 instructions in the last hour');
    const epoch = Number(answer.match(/<!date\^(\d+)\^/)?.[1]) * 1000;
    expect(epoch).toBeGreaterThan(before + 3_500_000);
    expect(epoch).toBeLessThan(before + 3_700_000);
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    // Someone else is not affected.
    await h.startJob({ user_id: 'U0BOB', text: 'bob asks' });
  });

  it('refuses a command from another workspace', async () => {
    h = await startHarness();
    expect(await refusedCommand({ team_id: 'T0OTHER' })).toContain('another Slack workspace');
    expect(h.agent.requests).toHaveLength(0);
  });
});

describe('reports follow the access rules', () => {
  /** The private answer to a report command (acknowledged directly). */
  async function report(fields: Parameters<Harness['command']>[0]) {
    const res = await h.command(fields);
    expect(res.status).toBe(200);
    return (await res.json()) as { response_type: string; text: string };
  }

  it('answers list, list channel and status only to people who may use the bot', async () => {
    h = await startHarness({ ALLOWED_USER_IDS: 'U0ALICE,U0GUEST', ALLOWED_CHANNEL_IDS: 'C0GENERAL' });
    h.slack.guests.add('U0GUEST');
    await h.startJob({ text: 'Secret roadmap page' });
    for (const text of ['list', 'list channel', 'status']) {
      const outsider = await report({ text, user_id: 'U0MALLORY' });
      expect(outsider.text).toContain('not on the list');
      const guest = await report({ text, user_id: 'U0GUEST' });
      expect(guest.text).toContain('Guest accounts cannot');
      const elsewhere = await report({ text, channel_id: 'C0RANDOM' });
      expect(elsewhere.text).toContain('not enabled in this channel');
      for (const answer of [outsider, guest, elsewhere]) {
        expect(answer.response_type).toBe('ephemeral');
        expect(answer.text).not.toContain('Secret roadmap');
        expect(answer.text).not.toContain('instructions used');
      }
    }
    expect((await report({ text: 'list channel' })).text).toContain('Secret roadmap');
  });

  it('shows a guest why they cannot use the bot in the App Home, instead of their jobs', async () => {
    h = await startHarness();
    h.slack.guests.add('U0GUEST');
    await h.anyEvent({ type: 'app_home_opened', user: 'U0GUEST', tab: 'home', channel: 'D0HOME' });
    const home = await waitFor('home published', () => h.slack.homes.get('U0GUEST'));
    expect(JSON.stringify(home)).toContain('Guest accounts cannot');
    expect(JSON.stringify(home)).not.toContain('Your docs agent jobs');
    await h.anyEvent({ type: 'app_home_opened', user: 'U0ALICE', tab: 'home', channel: 'D0HOME' });
    const member = await waitFor('home published', () => h.slack.homes.get('U0ALICE'));
    expect(JSON.stringify(member)).toContain('Your docs agent jobs');
  });
});

describe('bad input', () => {
  it('refuses an instruction over MAX_PROMPT_CHARS and says the limit', async () => {
    h = await startHarness({ MAX_PROMPT_CHARS: '50' });
    const answer = await refusedCommand({ text: 'x'.repeat(51) });
    expect(answer).toContain('51 characters');
    expect(answer).toContain('the limit is 50');
    expect(h.agent.requests).toHaveLength(0);
    await h.startJob({ text: 'y'.repeat(50) });
  });

  it('refuses a follow-up over the limit privately', async () => {
    h = await startHarness({ MAX_PROMPT_CHARS: '50' });
    const { channel, threadTs } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, text: 'z'.repeat(80) });
    const eph = await waitFor('private refusal', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(String(eph.args.text)).toContain('the limit is 50');
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });

  it.each(['list everything', '--verbose', 'cancel'])(
    'answers the unknown subcommand %j with usage',
    async (word) => {
      h = await startHarness();
      const res = await h.command({ text: word });
      const body = (await res.json()) as { response_type: string; text: string };
      expect(body.response_type).toBe('ephemeral');
      expect(body.text).toContain('is not a /docs-agent subcommand');
      expect(body.text).toContain('/docs-agent &lt;instruction&gt;');
      expect(h.agent.requests).toHaveLength(0);
    },
  );

  it('still takes a one-word instruction', async () => {
    h = await startHarness();
    await h.startJob({ text: 'Proofread' });
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Proofread' });
  });
});
