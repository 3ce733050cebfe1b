import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, messageShortcut, viewSubmission } from '../helpers/payloads.js';

const h = useHarness({ PR_LINK_HOSTS: 'github.com' });

/** Everything the bot sent to Slack: messages (as last updated), Home tabs, modals and private replies. */
const everythingSent = (harness: Harness) =>
  JSON.stringify([
    harness.slack.messages,
    [...harness.slack.homes.values()],
    harness.slack.views,
    harness.slack.responses,
  ]);

/** Slack syntax that notifies people or shows one address while leading to another. */
const PINGS = /<!(here|channel|everyone|subteam)/;

async function finishWith(jobId: string, fields: Record<string, unknown>) {
  const job = h.agent.jobs.get(jobId);
  if (!job) throw new Error(`no job ${jobId}`);
  // Outside the documented schema on purpose: a broken or hostile agent API.
  Object.assign(job, { status: 'completed', offSpec: true, ...fields });
  await waitFor('outcome posted', () =>
    h.slack.messages.find((m) => m.metadata?.event_payload?.kind === 'outcome'),
  );
}

describe('text from people is quoted back inert', () => {
  it('a modal instruction with broadcast and group mentions pings nobody', async () => {
    const res = await h.interact(messageShortcut({ ts: '1700000400.000100', text: 'see this' }, 'C0GENERAL'));
    expect(res.status).toBe(200);
    const view = await waitFor('modal', () => h.slack.views[0]);
    await h.interact(
      viewSubmission(view, {
        instruction:
          'Tell <!everyone> and <!subteam^S0DOCS|@docs-team> about <https://phish.example|https://github.com/acme/docs/pull/1>',
        message: '<!channel> read this',
        channel: 'C0GENERAL',
      }),
    );
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const card = await waitFor('card', () => h.slack.threadPosts('1700000400.000100')[0]);
    expect(everythingSent(h)).not.toMatch(PINGS);
    expect(everythingSent(h)).not.toContain('<https://phish.example');
    // Shown as typed, so the reader sees what was asked.
    expect(card.text).toContain('&lt;!everyone&gt;');
  });

  it('a mention typed with @here does not ping everyone again when the card quotes it', async () => {
    await h.anyEvent(
      appMention({ text: '<@U0BOT> <!here> please document <!subteam^S0DOCS|@docs-team> onboarding' }),
    );
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const card = await waitFor('card', () =>
      h.slack.messages.find((m) => m.metadata?.event_type === 'docs_agent_root'),
    );
    expect(card.text).toContain('@here please document @docs-team onboarding');
    expect(everythingSent(h)).not.toMatch(PINGS);
  });

  it('a disguised link in a command shows its real address and is no link', async () => {
    await h.startJob({ text: 'Fix <https://phish.example/login|https://github.com/acme/docs/pull/1>' });
    expect(everythingSent(h)).not.toContain('<https://phish.example');
    const card = h.slack.messages.find((m) => !m.thread_ts);
    expect(card?.text).toContain('https://github.com/acme/docs/pull/1 (https://phish.example/login)');
  });
});

describe('strings from the agent API are data', () => {
  it('a pull request link carrying markup is no link, no button and no ping anywhere', async () => {
    const { jobId } = await h.startJob({ text: 'Document webhooks' });
    await finishWith(jobId, {
      prLink: 'https://github.com/acme/docs/pull/7|Totally safe> <!channel> <https://phish.example|x',
      source: { repository: 'acme/docs` <!here> `', ref: 'main`<!everyone>' },
      model: '<https://phish.example|claude>',
    });
    await h.command({ text: 'list' });
    await h.anyEvent({ type: 'app_home_opened', user: 'U0ALICE', tab: 'home', channel: 'D0HOME' });
    await waitFor('home published', () => h.slack.homes.get('U0ALICE'));
    const sent = everythingSent(h);
    expect(sent).not.toMatch(PINGS);
    expect(sent).not.toContain('<https://phish.example');
    expect(sent).not.toContain('"url":');
    const outcome = h.slack.messages.find((m) => m.metadata?.event_payload?.kind === 'outcome');
    expect(outcome?.text).toContain('opened a pull request at `https://github.com/acme/docs/pull/7');
  });

  it('a pull request address on another host, or longer than a button allows, is shown as text', async () => {
    const { jobId } = await h.startJob({ text: 'Document retries' });
    const long = `https://github.com/acme/docs/pull/7?${'q'.repeat(3_100)}`;
    await finishWith(jobId, { prLink: long });
    const outcome = h.slack.messages.find((m) => m.metadata?.event_payload?.kind === 'outcome');
    expect(JSON.stringify(outcome?.blocks)).not.toContain('"url"');
    expect(outcome?.text).not.toContain('<https://');
    expect(outcome?.text).toContain('`https://github.com/acme/docs/pull/7?qqq');
  });

  it('a trusted pull request address is a link and a button', async () => {
    const { jobId } = await h.startJob({ text: 'Document pagination' });
    await finishWith(jobId, { prLink: 'https://github.com/acme/docs/pull/9' });
    const outcome = h.slack.messages.find((m) => m.metadata?.event_payload?.kind === 'outcome');
    expect(outcome?.text).toContain('<https://github.com/acme/docs/pull/9|Review the pull request>');
    expect(JSON.stringify(outcome?.blocks)).toContain('"url":"https://github.com/acme/docs/pull/9"');
  });
});
