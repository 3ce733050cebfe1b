import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ASSISTANT_TITLE_MAX_CHARS,
  type AssistantPane,
  createAssistantPane,
} from '../../src/jobs/assistant-pane.js';
import { jobRecord } from '../helpers/job-record.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

const PANE = 'D0PANE';
const THREAD = '1700000000.000300';
const paneJob = (fields: Parameters<typeof jobRecord>[0] = {}) =>
  jobRecord({ origin: 'direct', privacy: 'pane', channelId: PANE, threadTs: THREAD, ...fields });

let w: JobWorld;
let pane: AssistantPane;
beforeEach(() => {
  w = createJobWorld();
  pane = createAssistantPane(w.ctx);
});
afterEach(async () => {
  await w.store.close();
});

describe('starting', () => {
  it('says the job is starting under the thread and titles the thread with the instruction', async () => {
    await pane.starting(paneJob({ instruction: 'Document rate limits &amp; quotas' }));
    expect(w.slack.assistantThread).toHaveBeenCalledExactlyOnceWith({
      channel: PANE,
      threadTs: THREAD,
      status: 'is starting the job…',
      title: 'Document rate limits & quotas',
    });
  });

  it('makes the title one readable line of at most the longest title', async () => {
    const instruction = `Rewrite\n\nthe &lt;guide&gt;\tfor ${'webhooks '.repeat(40)}`;
    await pane.starting(paneJob({ instruction }));
    const [[{ title }]] = w.slack.assistantThread.mock.calls as [[{ title: string }]];
    expect(title.startsWith('Rewrite the <guide> for webhooks')).toBe(true);
    expect(title).not.toMatch(/[\n\t]|&lt;|\s{2}/);
    expect(title.length).toBeLessThanOrEqual(ASSISTANT_TITLE_MAX_CHARS);
    expect(title.length).toBeGreaterThan(ASSISTANT_TITLE_MAX_CHARS - 10);
  });

  it('gives an erased instruction no title text', async () => {
    await pane.starting(paneJob({ erasedAt: 1_700_000_000_000 }));
    expect(w.slack.assistantThread.mock.calls[0]?.[0]).toMatchObject({ title: '' });
  });
});

describe('working', () => {
  it('says the agent is working on it, leaving the title as it is', async () => {
    await pane.working(paneJob());
    expect(w.slack.assistantThread).toHaveBeenCalledExactlyOnceWith({
      channel: PANE,
      threadTs: THREAD,
      status: 'is working on it…',
    });
  });
});

describe('which jobs', () => {
  it('leaves alone a job not asked in an assistant thread, whatever its channel', async () => {
    for (const privacy of ['public', 'private', 'unknown'] as const) {
      await pane.starting(paneJob({ privacy }));
      await pane.working(paneJob({ privacy }));
    }
    expect(w.slack.assistantThread).not.toHaveBeenCalled();
  });

  it('leaves alone a pane job whose thread is not known', async () => {
    await pane.starting(paneJob({ threadTs: null }));
    expect(w.slack.assistantThread).not.toHaveBeenCalled();
  });
});

describe('when Slack fails', () => {
  it('logs the failure and lets the job go on', async () => {
    w.slack.assistantThread.mockRejectedValue(new Error('ratelimited'));
    await expect(pane.starting(paneJob({ id: 7 }))).resolves.toBeUndefined();
    await expect(pane.working(paneJob({ id: 7 }))).resolves.toBeUndefined();
    const warned = w.logs.filter((l) => l.includes('could not update the assistant pane'));
    expect(warned).toHaveLength(2);
    expect(warned[0]).toContain('"jobId":7');
  });
});
