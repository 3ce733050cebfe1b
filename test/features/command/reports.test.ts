import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { refusalText } from '../../../src/blocks/refusal-texts.js';
import type { Command } from '../../../src/features/command/payload.js';
import { answerReport, type ReportDeps } from '../../../src/features/command/reports.js';
import { parseCommandText } from '../../../src/features/command/subcommands.js';
import { commandText } from '../../../src/features/command/wording.js';
import { TEAM, WORKSPACE_URL } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { ackSpy, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

const FAKE_KEY = 'mint_test-not-a-real-key-0001';
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld({ DOCS_AGENT_API_KEY: FAKE_KEY });
});
afterEach(() => {
  vi.useRealTimers();
  return w.stop();
});

/** `/docs-agent <words>` (a subcommand) from `user` in `channel`; the one answer it was given. */
async function report(words: string, fields: Partial<Command> = {}, deps: ReportDeps = w.deps) {
  const asked = parseCommandText(words);
  if (asked.kind !== 'subcommand') throw new Error(`${words} is not a subcommand`);
  const { ack } = ackSpy(w);
  const command: Command = {
    text: words,
    user_id: REQUESTER,
    channel_id: CHANNEL,
    team_id: TEAM,
    team_domain: 'from-the-command',
    trigger_id: 'trigger-report',
    ...fields,
  };
  await answerReport(deps, command, asked, ack as never);
  expect(ack).toHaveBeenCalledOnce();
  const answer = ack.mock.calls[0]?.[0] as { response_type: string; text: string; blocks?: unknown[] };
  expect(answer.response_type).toBe('ephemeral');
  return { answer, json: JSON.stringify(answer) };
}

const mine = 'list';
const channel = 'list channel';
const status = 'status';

describe('/docs-agent list', () => {
  beforeEach(async () => {
    await w.insertJob({}, 'Document the rate limits');
    await w.insertJob({ requesterId: 'U0BOB' }, 'Fix the quickstart');
    await w.insertJob({ channelId: 'C0OTHER' }, 'Add an FAQ entry');
  });

  it('lists the person’s own jobs, wherever they were asked', async () => {
    const { json } = await report(mine);
    expect(json).toContain('Document the rate limits');
    expect(json).toContain('Add an FAQ entry');
    expect(json).not.toContain('Fix the quickstart');
  });

  it('`list channel`: the channel’s jobs, whoever asked', async () => {
    const { json } = await report(channel);
    expect(json).toContain('Document the rate limits');
    expect(json).toContain('Fix the quickstart');
    expect(json).not.toContain('Add an FAQ entry');
  });

  it('links to the workspace Slack named, or to the command’s team domain before it has', async () => {
    await w.activeJob();
    expect((await report(mine)).json).toContain('https://from-the-command.slack.com/');
    await w.identity.get();
    const { json } = await report(mine);
    expect(json).toContain(WORKSPACE_URL);
    expect(json).not.toContain('from-the-command');
  });

  it('masks a secret that reached a job’s words', async () => {
    await w.insertJob({}, `Rotate the key ${FAKE_KEY} in the docs`);
    const { json } = await report(mine);
    expect(json).toContain('Rotate the key');
    expect(json).not.toContain(FAKE_KEY);
  });
});

describe('/docs-agent status', () => {
  it('quotes what thumbs-down said to fix only where the job’s words may be read', async () => {
    const said = async (fields: Parameters<ListenerWorld['insertJob']>[0], reason: string) => {
      const { job } = await w.insertJob(fields);
      await w.store.recordFeedbackReason({ jobId: job.id, runSeq: 1, userId: 'U0VOTER', reason }, w.clock.at);
    };
    await said({ privacy: 'public', channelId: 'C0PUBLIC', requesterId: 'U0BOB' }, 'Public words');
    await said({ privacy: 'private', channelId: 'G0SECRET', requesterId: 'U0BOB' }, 'Secret words');
    await said({ privacy: 'pane', channelId: 'D0ALICE', requesterId: REQUESTER }, 'Own pane words');
    // Elsewhere, someone else's private job is counted but not quoted.
    const elsewhere = (await report(status, { channel_id: 'C0ELSEWHERE', user_id: 'U0CAROL' })).answer.text;
    expect(elsewhere).toContain('Public words');
    expect(elsewhere).not.toContain('Secret words');
    expect(elsewhere).not.toContain('Own pane words');
    expect(elsewhere).toContain('2 more on jobs asked for where you cannot see them');
    // In the private channel itself, its words are shown; the requester sees their own pane's.
    const inside = (await report(status, { channel_id: 'G0SECRET', user_id: 'U0CAROL' })).answer.text;
    expect(inside).toContain('Secret words');
    expect(inside).not.toContain('Own pane words');
    const own = (await report(status, { channel_id: 'C0ELSEWHERE', user_id: REQUESTER })).answer.text;
    expect(own).toContain('Own pane words');
    expect(own).not.toContain('Secret words');
  });

  it('reports the projects served, and one instance on a store of its own', async () => {
    const live = vi.spyOn(w.store, 'liveInstances');
    const { answer } = await report(status);
    expect(answer.text).toContain(w.config.agent.projectId);
    expect(live).not.toHaveBeenCalled();
  });

  it('on a shared store, counts the live instances (at least this one)', async () => {
    const deps = (instances: number) =>
      ({
        ...w.deps,
        store: { ...w.store, shared: true, liveInstances: async () => instances },
      }) as ReportDeps;
    expect((await report(status, {}, deps(3))).json).toContain('*Instances*\\n3');
    expect((await report(status, {}, deps(0))).json).toContain('*Instances*\\n1');
  });

  it('says the records cannot be read when the store fails', async () => {
    vi.spyOn(w.store, 'countActiveJobs').mockRejectedValueOnce(new Error('disk I/O error'));
    const { answer } = await report(status);
    expect(answer).toEqual({ response_type: 'ephemeral', text: commandText.reportUnavailable() });
    expect(JSON.parse(w.logged('error', 'could not read the store for a report')[0] as string)).toMatchObject(
      {
        kind: 'status',
      },
    );
  });
});

describe('who gets a report', () => {
  it('someone who may not use the bot is refused, and shown nothing of the store', async () => {
    await w.stop();
    w = createListenerWorld({ ALLOWED_USER_IDS: 'U0SOMEONEELSE' });
    const recent = vi.spyOn(w.store, 'recentJobs');
    const { json } = await report(mine);
    expect(json).toContain('not on the list of people');
    expect(recent).not.toHaveBeenCalled();
  });

  it('when the access check fails: refused as unverified (fail closed)', async () => {
    const deps = { ...w.deps, access: { check: async () => Promise.reject(new Error('users.info failed')) } };
    const { answer } = await report(status, {}, deps);
    expect(answer).toEqual({ response_type: 'ephemeral', text: refusalText({ reason: 'unverified' }) });
  });

  it('when the access check does not answer within 1.5 s: refused as unverified, within Slack’s 3 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const deps = { ...w.deps, access: { check: () => new Promise<never>(() => {}) } };
    let done = false;
    const answered = report(status, {}, deps).finally(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(1_499);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const { answer } = await answered;
    expect(answer).toEqual({ response_type: 'ephemeral', text: refusalText({ reason: 'unverified' }) });
  });
});
