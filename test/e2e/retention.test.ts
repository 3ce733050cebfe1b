import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/store/retention.js';
import type { Store } from '../../src/store/types.js';
import type { AgentStandIn } from '../helpers/agent-stand-in.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { insertFinishedJob } from '../helpers/job-record.js';
import type { SlackStandIn } from '../helpers/slack-stand-in.js';

const THREAD = '1690000000.000077';

/** A job that finished 100 days ago, its root message still in the channel. */
async function seedOldJob(store: Store, slack: SlackStandIn, agent: AgentStandIn) {
  const then = Date.now() - 100 * DAY_MS;
  slack.messages.push({ channel: 'C0GENERAL', ts: THREAD, text: 'root', bot_id: 'B0BOT', user: 'U0BOT' });
  agent.jobs.set('job_old', {
    id: 'job_old',
    status: 'completed',
    source: { repository: 'https://github.com/example/docs', ref: null },
    model: 'sonnet',
    prLink: null,
    projectId: 'proj_test',
    createdAt: new Date(then).toISOString(),
    archivedAt: null,
    prompts: ['Document the secret roadmap'],
  });
  await insertFinishedJob(store, then, {
    outcome: 'completed_no_changes',
    threadTs: THREAD,
    job: {
      channelId: 'C0GENERAL',
      instruction: 'Document the secret roadmap',
      triggerKey: 'command:old',
      responseUrl: 'https://hooks.slack.test/commands/old',
      pollIntervalMs: 40,
    },
    patch: { agentJobId: 'job_old' },
  });
}

describe('retention (RETENTION_DAYS, default 90)', () => {
  const h = useHarness({}, { seed: seedOldJob });

  it('erases an old job’s texts, still routes a reply in its thread, and shows the erased instruction readably', async () => {
    const erased = await waitFor('the old job erased', async () => {
      const job = await h.app.store.findJobByThread('C0GENERAL', THREAD);
      return job?.erasedAt ? job : undefined;
    });
    expect(erased).toMatchObject({ instruction: '(erased after 90 days)', responseUrl: null });
    expect((await h.app.store.getRuns(erased.id)).map((r) => r.prompt)).toEqual(['']);

    const list = await h.command({ text: 'list' });
    const body = (await list.json()) as { text: string };
    expect(body.text).toContain('(erased after 90 days)');
    expect(body.text).not.toContain('secret roadmap');

    await h.event({ channel: 'C0GENERAL', thread_ts: THREAD, text: 'Now add the changelog' });
    const sent = await waitFor('follow-up to the old job', () => h.agent.requestsFor('message')[0]);
    expect(sent).toMatchObject({ jobId: 'job_old', body: { prompt: 'Now add the changelog' } });
    const card = await waitFor('status card re-rendered', () => {
      const root = h.slack.messages.find((m) => m.ts === THREAD);
      return root?.text.includes('(erased after 90 days)') ? root : undefined;
    });
    expect(card.text).not.toContain('secret roadmap');
  });
});
