import { afterEach, describe, expect, it } from 'vitest';
import { secretsOf } from '../../src/config/config.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { AWKWARD, leaks } from '../helpers/secrets.js';

/** A metrics token as awkward as METRICS_TOKEN allows (RFC 6750 characters), with its marker. */
const METRICS_TOKEN = 'metrics.Q7met+to/ken~0000';

/** Every secret this deployment is configured with (HTTP mode: no app token). */
const SECRETS = {
  botToken: AWKWARD.botToken,
  signingSecret: AWKWARD.signingSecret,
  apiKey: AWKWARD.apiKey,
  metricsToken: METRICS_TOKEN,
  dbPassword: AWKWARD.dbPassword,
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Everything the app sent Slack: Web API calls and response_url posts. */
const slackSide = (harness: Harness) => [
  ...harness.slack.calls.map((c) => JSON.stringify(c.args)),
  ...harness.slack.responses.map((r) => JSON.stringify(r.body)),
];

const notices = (harness: Harness) =>
  harness.slack
    .callsTo('chat.postMessage')
    .filter((c) => String(c.args.text).includes('rejected the instruction'));

describe('secrets echoed by the agent API, or a proxy in front of it', () => {
  it('never reach Slack, nor the store the messages are rendered from', async () => {
    h = await startHarness(
      {
        SLACK_BOT_TOKEN: AWKWARD.botToken,
        SLACK_SIGNING_SECRET: AWKWARD.signingSecret,
        DOCS_AGENT_API_KEY: AWKWARD.apiKey,
        METRICS_TOKEN,
        // Only its password matters here: the store is the SQLite file given below.
        DATABASE_URL: `postgres://bot:${encodeURIComponent(AWKWARD.dbPassword)}@127.0.0.1:1/docs`,
      },
      { wrapStore: (store) => store },
    );
    const harness = h;
    expect(secretsOf(harness.config)).toEqual(expect.arrayContaining(Object.values(SECRETS)));

    // The API refuses each instruction, quoting one secret in its explanation (which is shown).
    for (const [name, secret] of Object.entries(SECRETS)) {
      const before = notices(harness).length;
      harness.agent.fail('create', {
        status: 400,
        body: JSON.stringify({ error: `Invalid request: ${name} ${secret} is not allowed here` }),
      });
      await harness.command({ text: `Document ${name}` });
      await waitFor(`notice for ${name}`, () => notices(harness).length > before);
    }

    // A proxy answers in plain text, quoting the request's credentials back.
    const plain = { 'content-type': 'text/plain; charset=utf-8' };
    harness.agent.fail('create', {
      status: 400,
      headers: plain,
      body: `400 Bad Request\nx-slack-signature-secret: ${AWKWARD.signingSecret}\npassword=${AWKWARD.dbPassword}`,
    });
    await harness.command({ text: 'Document the proxy' });
    await waitFor('notice for the proxy', () => notices(harness).length === 6);

    // A job that starts, whose polls meet a proxy's plain-text 502 quoting secrets (recorded as
    // the job's last error), and whose fields then echo secrets into the status card and outcome.
    const { jobId, threadTs, channel } = await harness.startJob({ text: 'Document webhooks' });
    const gets = harness.agent.requestsFor('get').length;
    harness.agent.fail(
      'get',
      ...Array.from({ length: 6 }, () => ({
        status: 502,
        headers: plain,
        body: `502 Bad Gateway: upstream refused token ${METRICS_TOKEN} and ${AWKWARD.signingSecret}`,
      })),
    );
    await waitFor('polls failed', () => harness.agent.requestsFor('get').length >= gets + 6);
    await waitFor(
      'poll failure recorded',
      async () => (await harness.app.store.findJobByThread(channel, threadTs))?.lastError,
    );
    harness.agent.setStatus(jobId, 'active', {
      model: `sonnet ${AWKWARD.signingSecret}`,
      source: { repository: `https://github.com/example/docs#${METRICS_TOKEN}`, ref: AWKWARD.dbPassword },
    });
    await waitFor('card shows the echoed fields', () =>
      harness.slack.callsTo('chat.update').some((c) => JSON.stringify(c.args).includes('sonnet')),
    );
    harness.agent.complete(jobId, `https://github.com/example/docs/pull/1?${AWKWARD.signingSecret}`);
    await waitFor('outcome', () => harness.slack.threadPosts(threadTs).length === 1);
    await harness.settled();

    expect(leaks(slackSide(harness), SECRETS)).toEqual([]);
    const jobs = await harness.app.store.recentJobs({ requesterId: 'U0ALICE' }, 50);
    expect(jobs).toHaveLength(7);
    const stored = await Promise.all(
      jobs.map(async (job) => JSON.stringify({ job, runs: await harness.app.store.getRuns(job.id) })),
    );
    expect(leaks(stored, SECRETS)).toEqual([]);
    // What was said still says why, with the secret masked.
    expect(JSON.stringify(notices(harness)[1]?.args)).toContain('signingSecret [redacted] is not allowed');
  });
});
