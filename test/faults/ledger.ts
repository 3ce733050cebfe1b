import type { AgentStandIn } from '../helpers/agent-stand-in.js';
import type { SlackStandIn, StoredMessage } from '../helpers/slack-stand-in.js';

/** One instruction a person gave in Slack, as the fault suite tracks it. */
export interface Instruction {
  prompt: string;
  /** `direct`: a message at the top of a direct message to the bot; its thread is its own ts. */
  kind: 'command' | 'reply' | 'direct';
  user: string;
  /** Slack got a 2xx answer: from the person's side the instruction was given. */
  acked: boolean;
  /** For messages: the conversation (default the channel the suite uses). */
  channel?: string;
  /** For commands: the id in the response_url path. */
  responseId?: string;
  /** For replies: the thread and the reply's own ts (a direct message's own ts is its thread). */
  threadTs?: string;
  messageTs?: string;
}

/** What one scenario run adds up to. */
export interface Counts {
  runs: number;
  given: number;
  jobsCreated: number;
  followUpsSent: number;
  outcomesExpected: number;
  outcomesDelivered: number;
  /** Instructions that did not (surely) reach the agent, and whose person was told so. */
  told: number;
  duplicates: number;
  lost: number;
}

export const emptyCounts = (): Counts => ({
  runs: 0,
  given: 0,
  jobsCreated: 0,
  followUpsSent: 0,
  outcomesExpected: 0,
  outcomesDelivered: 0,
  told: 0,
  duplicates: 0,
  lost: 0,
});

export function add(a: Counts, b: Counts): Counts {
  const out = { ...a };
  for (const key of Object.keys(b) as (keyof Counts)[]) out[key] += b[key];
  return out;
}

type About = {
  kind?: string;
  run?: number | null;
  source?: string | null;
  covers?: string;
  sources?: string;
};
const aboutOf = (m: StoredMessage): About => (m.metadata?.event_payload ?? {}) as About;

/**
 * Adds up one run from what the stand-ins saw: every instruction either reached the agent
 * exactly once and got exactly one outcome, or its person was told it did not (surely) arrive.
 * Anything else is lost or doubled. `details` explains every lost or doubled instruction.
 */
export function account(
  instructions: Instruction[],
  slack: SlackStandIn,
  agent: AgentStandIn,
  details: string[],
): Counts {
  const counts = emptyCounts();
  counts.runs = 1;
  const prompts = [...agent.jobs.values()].flatMap((j) => j.prompts);
  counts.jobsCreated = agent.jobs.size;
  counts.followUpsSent = prompts.length - agent.jobs.size;
  // Thread posts, and posts sent to the requester directly when the thread was unavailable.
  const posts = slack.messages.filter((m) => m.metadata?.event_type === 'docs_agent_post');
  const threadOf = (m: StoredMessage) =>
    m.thread_ts ?? (m.metadata?.event_payload as { thread?: string } | undefined)?.thread;

  for (const ins of instructions.filter((i) => i.acked)) {
    counts.given += 1;
    const roots = slack.messages.filter(
      (m) => m.metadata?.event_type === 'docs_agent_root' && m.text.includes(ins.prompt),
    );
    const threadTs =
      ins.kind === 'command' ? roots[0]?.ts : ins.kind === 'direct' ? ins.messageTs : ins.threadTs;
    const answers = (a: About) =>
      ins.kind !== 'reply'
        ? a.run === 1 || (a.covers ?? '').split(',').includes('1')
        : a.source === ins.messageTs || (a.sources ?? '').split(',').includes(ins.messageTs ?? '-');
    const about = posts.filter((m) => threadOf(m) === threadTs && answers(aboutOf(m)));
    // Replies sent together in one batch reach the agent as one prompt, one paragraph each.
    const reached = prompts.filter((p) => p === ins.prompt || p.split('\n\n').includes(ins.prompt)).length;
    const outcomes = about.filter((m) => aboutOf(m).kind === 'outcome').length;
    const noticed =
      about.some((m) => aboutOf(m).kind === 'notice') ||
      (ins.responseId !== undefined &&
        slack.responses.some((r) => r.path === `/respond/${ins.responseId}`)) ||
      (ins.kind !== 'command' &&
        slack
          .callsTo('chat.postEphemeral')
          .some((c) => c.args.thread_ts === threadTs && c.args.user === ins.user));
    const what = `${ins.kind} "${ins.prompt}": reached ${reached}, outcomes ${outcomes}, told ${noticed}, roots ${roots.length}`;

    if (reached > 1 || outcomes > 1 || roots.length > 1) {
      counts.duplicates += 1;
      details.push(`doubled: ${what}`);
    } else if (reached === 1 && (outcomes === 1 || !noticed)) {
      counts.outcomesExpected += 1;
      if (outcomes === 1) counts.outcomesDelivered += 1;
      else {
        counts.lost += 1;
        details.push(`outcome lost: ${what}`);
      }
    } else if (noticed) {
      counts.told += 1;
    } else {
      counts.lost += 1;
      details.push(`instruction lost: ${what}`);
    }
  }
  return counts;
}

const COLUMNS: [keyof Counts, string][] = [
  ['runs', 'runs'],
  ['given', 'instructions given'],
  ['jobsCreated', 'jobs created'],
  ['followUpsSent', 'follow-ups sent'],
  ['outcomesExpected', 'outcomes expected'],
  ['outcomesDelivered', 'outcomes delivered'],
  ['told', 'told not sent / unknown'],
  ['duplicates', 'duplicates'],
  ['lost', 'lost'],
];

/** A Markdown table of scenario rows. */
export function table(rows: { scenario: string; counts: Counts }[]): string {
  const header = `| scenario | ${COLUMNS.map(([, label]) => label).join(' | ')} |`;
  const rule = `|---|${COLUMNS.map(() => '---:').join('|')}|`;
  const total = rows.reduce((sum, r) => add(sum, r.counts), emptyCounts());
  const line = (name: string, c: Counts) => `| ${name} | ${COLUMNS.map(([key]) => c[key]).join(' | ')} |`;
  return [header, rule, ...rows.map((r) => line(r.scenario, r.counts)), line('**all**', total)].join('\n');
}
