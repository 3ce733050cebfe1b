import { describe, expect, it } from 'vitest';
import type { AgentOperation } from '../helpers/agent-stand-in.js';
import { waitFor } from '../helpers/http.js';
import { buttonClick } from '../helpers/payloads.js';
import type { SlackCall, StoredMessage } from '../helpers/slack-stand-in.js';
import { add, type Counts, emptyCounts, SAYS_NOT_SENT, SAYS_UNKNOWN } from './ledger.js';
import { recordRow } from './report.js';
import { createWorld, killOnce, type World } from './world.js';

/** Runs per kill point. */
const RUNS_PER_POINT = 3;

type Hit = {
  slack?: (c: SlackCall) => boolean;
  agent?: (op: AgentOperation) => boolean;
  afterAnswer: boolean;
};
const isCardInThread = (c: SlackCall) =>
  c.method === 'chat.postMessage' &&
  Boolean(c.args.thread_ts) &&
  (c.args.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_root';

/** Where the process is killed once "Try again" was clicked. */
const POINTS: { name: string; hit?: Hit }[] = [
  { name: 'retry: after the click is acknowledged' },
  { name: 'retry: after the new card is posted', hit: { slack: isCardInThread, afterAnswer: true } },
  { name: 'retry: during its create call', hit: { agent: (op) => op === 'create', afterAnswer: false } },
  {
    name: 'retry: after its create call, before the store write',
    hit: { agent: (op) => op === 'create', afterAnswer: true },
  },
];

const keyOf = (m: StoredMessage) => String(m.metadata?.event_payload.key ?? '');
const buttonOf = (m: StoredMessage | undefined) =>
  (m?.blocks ?? [])
    .flatMap((b) => (b.elements ?? []) as { action_id?: string; value?: string }[])
    .find((e) => e.action_id === 'retry_job');

/**
 * Adds up the retry as one instruction: it reached the agent once with one outcome, or the
 * person was told it did not (surely) start; a second create call or card is a duplicate.
 */
function accountRetry(world: World, retryJobId: number, clicks: string[], details: string[]): Counts {
  const counts = { ...emptyCounts(), runs: 1, given: 1 };
  const creates = world.agent.jobs.size - 1;
  counts.jobsCreated = creates;
  const about = (prefix: string) =>
    world.slack.messages.filter((m) => keyOf(m) === `${prefix}:${retryJobId}`);
  const cards = world.slack.messages.filter((m) => keyOf(m) === `root:${retryJobId}`);
  const outcomes = about('outcome:1').length;
  // Notices about this retry only: its own keys in the thread, or the clicks' response_urls. A
  // click after the retry started is rightly told "nothing was started": only the thread's
  // notices may not say "not started" of a retry that reached the agent.
  const inThread = [...about('start-unknown'), ...about('start-error')].map((m) => m.text);
  const notices = [
    ...inThread,
    ...world.slack.responses
      .filter((r) => clicks.some((id) => r.path === `/respond/${id}`))
      .map((r) => String(r.body.text ?? '')),
  ];
  const saysUnknown = notices.some((t) => SAYS_UNKNOWN.test(t));
  const saysNotSent = notices.some((t) => SAYS_NOT_SENT.test(t) && !SAYS_UNKNOWN.test(t));
  const threadSaysNotSent = inThread.some((t) => SAYS_NOT_SENT.test(t) && !SAYS_UNKNOWN.test(t));
  const what = `retry: creates ${creates}, cards ${cards.length}, outcomes ${outcomes}, notices ${notices.length}`;
  if (creates > 1 || cards.length > 1 || outcomes > 1) {
    counts.duplicates = 1;
    details.push(`doubled: ${what}`);
  } else if (creates === 1 && outcomes === 1) {
    counts.outcomesExpected = 1;
    counts.outcomesDelivered = 1;
  } else if (creates === 1 && threadSaysNotSent) {
    counts.lost = 1;
    details.push(`told "not started", but it reached the agent: ${what}`);
  } else if (creates === 1 && saysUnknown) {
    counts.told = 1;
    counts.toldReached = 1;
  } else if (creates === 1) {
    counts.outcomesExpected = 1;
    counts.lost = 1;
    details.push(`outcome lost: ${what}`);
  } else if (outcomes === 0 && (saysUnknown || saysNotSent)) counts.told = 1;
  else {
    counts.lost = 1;
    details.push(`retry lost: ${what}`);
  }
  return counts;
}

let runSerial = 0;

async function killRun(point: (typeof POINTS)[number], variant: number, details: string[]): Promise<Counts> {
  // Only the retry is killed: the failed job before it runs undisturbed.
  const kill = killOnce(() => world.app, { armed: false });
  const world = await createWorld({
    slackHooks: {
      before: (c) => (point.hit?.slack?.(c) && !point.hit.afterAnswer && kill.hit() ? 'drop' : undefined),
      after: (c) => void (point.hit?.slack?.(c) && point.hit.afterAnswer && kill.hit()),
    },
    agentHooks: {
      before: (op) => (point.hit?.agent?.(op) && !point.hit.afterAnswer && kill.hit() ? 'drop' : undefined),
      after: (op) => void (point.hit?.agent?.(op) && point.hit.afterAnswer && kill.hit()),
    },
  });
  try {
    await world.start();
    const prompt = `Document feature ${++runSerial} retried`;
    await world.command(prompt);
    await waitFor('job created', () => world.agent.jobs.size === 1, 10_000);
    world.agent.setStatus('job_1', 'failed');
    const button = await waitFor('"Try again" on the card', () => buttonOf(world.rootOf(prompt)), 10_000);
    await world.settle();
    const root = world.rootOf(prompt);
    if (!root) throw new Error('no root');
    const clicks: string[] = [];
    const click = () => {
      const id = `click-${runSerial}-${clicks.length}`;
      clicks.push(id);
      return world.click(
        buttonClick(
          { action_id: 'retry_job', value: button.value ?? '' },
          { messageTs: root.ts, responseUrl: world.slack.responseUrl(id) },
        ),
      );
    };

    kill.arm();
    const acked = await click();
    if (!point.hit && acked) kill.hit();
    await waitFor('kill or quiet', () => kill.killed || world.isSettled(), 15_000);
    if (kill.killed) {
      await world.app.exited;
      if (world.app.child.signalCode !== 'SIGKILL')
        details.push(`${point.name} #${variant}: the app was not killed (${world.app.child.signalCode})`);
      await world.start();
    }
    // The person clicks again (Slack showed an error, or they were unsure): never a second job.
    await click();
    await world.settle();
    expect(await world.app.stop()).toBe(0);
    if (!kill.killed) details.push(`${point.name} #${variant}: the kill point was not reached`);
    return accountRetry(world, Number(button.value) + 1, clicks, details);
  } finally {
    await world.close();
  }
}

describe('SIGKILL while a "Try again" is in flight, then a restart', () => {
  for (const point of POINTS) {
    it(`${point.name}: nothing lost, nothing doubled`, async () => {
      let total = emptyCounts();
      const details: string[] = [];
      for (let variant = 0; variant < RUNS_PER_POINT; variant++)
        total = add(total, await killRun(point, variant, details));
      recordRow('SIGKILL and restart', point.name, total, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(total.lost).toBe(0);
      expect(total.duplicates).toBe(0);
      expect(total.given).toBe(RUNS_PER_POINT);
    });
  }
});
