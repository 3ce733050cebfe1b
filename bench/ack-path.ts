import { startAgentStandIn } from '../test/helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from '../test/helpers/harness.js';
import { waitFor } from '../test/helpers/http.js';
import { SIGNING_SECRET } from '../test/helpers/signing.js';
import { BOT_TOKEN, startSlackStandIn } from '../test/helpers/slack-stand-in.js';
import { type Child, type LoadResult, runLoad, startBareBolt, startDocsAgent } from './processes.js';
import { preciseNow, round, type Summary, summarize } from './stats.js';

export interface AckPathOptions {
  commands: number;
  concurrency: number;
  warmup: number;
  /** Latency of every stand-in answer, in milliseconds. */
  latencyMs: number;
}

export interface AckRun {
  throughput: number;
  latencyMs: Summary;
  non200: number;
}

export interface AckPathResult {
  bare: AckRun;
  ours: AckRun;
  /** Command received until the job was created upstream with its root message posted. */
  startLatencyMs: Summary;
  /** How many of the commands had started when measured (all, unless something was lost). */
  started: number;
}

const tagOf = (text: unknown) => String(text).match(/#(ack-\d+)#/)?.[1];

function ackRun(load: LoadResult): AckRun {
  const ok = load.results.filter((r) => r.status === 200);
  return {
    throughput: round((load.results.length / (load.finishedAt - load.startedAt)) * 1_000, 1),
    latencyMs: summarize(load.results.map((r) => round(r.doneAt - r.sentAt, 3))),
    non200: load.results.length - ok.length,
  };
}

/**
 * Ack path and start latency: the same burst of signed `/docs-agent` commands, from a load
 * generator process, against a bare Bolt app that only acknowledges and against docs-agent doing
 * its real work (store, root post, create call).
 */
export async function ackPath(options: AckPathOptions): Promise<AckPathResult> {
  const rootAt = new Map<string, number>();
  const createAt = new Map<string, number>();
  const slack = await startSlackStandIn({
    latencyMs: options.latencyMs,
    hooks: {
      before: (call) => {
        const tag =
          call.method === 'chat.postMessage' && !call.args.thread_ts ? tagOf(call.args.text) : undefined;
        if (tag) rootAt.set(tag, preciseNow());
        return undefined;
      },
    },
  });
  const agent = await startAgentStandIn({
    latencyMs: options.latencyMs,
    hooks: {
      before: (op, body) => {
        const tag = op === 'create' ? tagOf(body?.prompt) : undefined;
        if (tag) createAt.set(tag, preciseNow());
        return undefined;
      },
    },
  });
  const children: Child[] = [];
  try {
    const env = testEnv(slack, agent, tempDatabase(), {
      LOG_LEVEL: 'info',
      DOCS_AGENT_API_TIMEOUT_MS: '6000',
      POLL_INTERVAL_MS: '10000',
      POLL_MAX_INTERVAL_MS: '300000',
      POLL_MAX_RPS: '10',
      // Thousands of commands from a few people: the per-person limit is not what is measured.
      MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '100000',
    });
    const bare = await startBareBolt({
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
    });
    const ours = await startDocsAgent(env);
    children.push(bare, ours);
    const load = (url: string, label: string, count: number, first = 0) =>
      runLoad({
        url,
        secret: SIGNING_SECRET,
        count,
        concurrency: options.concurrency,
        users: 50,
        channels: 10,
        label,
        first,
        responseBase: slack.responseUrl('bench').replace(/\/bench$/, ''),
      });
    // Warm both (JIT, connection pools, Slack look-ups cached per person), then measure each.
    await load(bare.base, 'warm', options.warmup);
    await load(ours.base, 'warm', options.warmup);
    await waitFor('warm-up jobs started', () => agent.jobs.size >= options.warmup, 60_000);
    const bareLoad = await load(bare.base, 'bare', options.commands);
    const oursLoad = await load(ours.base, 'ack', options.commands);
    await waitFor('every job started', () => createAt.size >= options.commands, 120_000).catch(
      () => undefined,
    );

    const starts: number[] = [];
    for (const r of oursLoad.results) {
      const tag = `ack-${r.i}`;
      const created = createAt.get(tag);
      const rooted = rootAt.get(tag);
      if (created === undefined || rooted === undefined) continue;
      // The root post's answer is on the path before the create call: the stand-in's own time.
      starts.push(round(Math.max(created, rooted) - r.sentAt - options.latencyMs, 3));
    }
    return {
      bare: ackRun(bareLoad),
      ours: ackRun(oursLoad),
      startLatencyMs: summarize(starts),
      started: starts.length,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await slack.close();
    await agent.close();
  }
}
