import type { AgentStandIn } from '../helpers/agent-stand-in.js';
import type { SlackCall, SlackStandIn, StoredMessage } from '../helpers/slack-stand-in.js';

/** One instruction a person gave in Slack, as the fault suite tracks it. */
export interface Instruction {
  prompt: string;
  /**
   * `direct`: a message at the top of a direct message to the bot; its thread is its own ts.
   * `edit`: an edit of a reply the agent already had (its author is told once per version).
   */
  kind: 'command' | 'reply' | 'direct' | 'edit';
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
  /** Texts the reply had before its author edited it while it waited: they never reach the agent. */
  earlier?: string[];
  /** Its author deleted it while it waited: it never reaches the agent. */
  withdrawn?: boolean;
}

/** What the bot says privately about an edit that came after the agent had the text. */
const LATE_EDIT_NOTE = 'already has the earlier version';
/** A notice that says the bot cannot tell whether the agent got the instruction. */
export const SAYS_UNKNOWN = /cannot tell whether|not known whether/i;
/** A notice that says the instruction did not reach the agent. */
export const SAYS_NOT_SENT = /no job was started|nothing was (sent|started)|was not sent/i;

/** What one scenario run adds up to. */
export interface Counts {
  runs: number;
  given: number;
  jobsCreated: number;
  followUpsSent: number;
  outcomesExpected: number;
  outcomesDelivered: number;
  /**
   * Instructions with no outcome whose person got a notice about that very instruction saying it
   * was not sent, or that the bot cannot tell whether it was.
   */
  told: number;
  /** Of those told, how many did reach the agent (each told it cannot be sure, never "not sent"). */
  toldReached: number;
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
  toldReached: 0,
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

  /** Private notes already counted for one instruction. */
  const usedNotes = new Set<SlackCall>();
  const paragraphsOf = (text: string) => prompts.filter((p) => p === text || p.split('\n\n').includes(text));
  for (const ins of instructions.filter((i) => i.acked)) {
    const what = `${ins.kind} "${ins.prompt}"`;
    // Taken back (deleted, or edited) while waiting: what was taken back must never reach the agent.
    const taken = [...(ins.earlier ?? []), ...(ins.withdrawn ? [ins.prompt] : [])];
    for (const text of taken.filter((t) => paragraphsOf(t).length > 0)) {
      counts.lost += 1;
      details.push(`taken back but sent: ${what} ("${text}")`);
    }
    if (ins.withdrawn) continue;
    if (ins.kind === 'edit') {
      // One private note per version of the message, however often Slack delivers the edit.
      const versions = instructions.filter((i) => i.kind === 'edit' && i.acked && i.user === ins.user).length;
      const notes = slack
        .callsTo('chat.postEphemeral')
        .filter((c) => c.args.user === ins.user && String(c.args.text).includes(LATE_EDIT_NOTE)).length;
      counts.given += 1;
      if (notes === 0) {
        counts.lost += 1;
        details.push(`edit not answered: ${what}`);
      } else if (notes > versions) {
        counts.duplicates += 1;
        details.push(`edit answered ${notes} times: ${what}`);
      } else counts.told += 1;
      continue;
    }
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
    // Notices about this instruction only: in its thread about its run, to its own response_url,
    // or a private note to its author in its thread (each note tells one instruction only).
    const notices = [
      ...about.filter((m) => aboutOf(m).kind === 'notice').map((m) => m.text),
      ...slack.responses
        .filter((r) => ins.responseId !== undefined && r.path === `/respond/${ins.responseId}`)
        .map((r) => String(r.body.text ?? '')),
    ];
    if (ins.kind !== 'command') {
      const note = slack
        .callsTo('chat.postEphemeral')
        .find(
          (c) =>
            !usedNotes.has(c) &&
            c.args.thread_ts === threadTs &&
            c.args.user === ins.user &&
            SAYS_NOT_SENT.test(String(c.args.text)),
        );
      if (note) {
        usedNotes.add(note);
        notices.push(String(note.args.text));
      }
    }
    const saysUnknown = notices.some((t) => SAYS_UNKNOWN.test(t));
    const saysNotSent = notices.some((t) => SAYS_NOT_SENT.test(t) && !SAYS_UNKNOWN.test(t));
    const seen = `${what}: reached ${reached}, outcomes ${outcomes}, notices ${notices.length}, roots ${roots.length}`;

    if (reached > 1 || outcomes > 1 || roots.length > 1) {
      counts.duplicates += 1;
      details.push(`doubled: ${seen}`);
    } else if (outcomes === 1 && reached === 1) {
      counts.outcomesExpected += 1;
      counts.outcomesDelivered += 1;
    } else if (reached === 1 && saysNotSent) {
      counts.lost += 1;
      details.push(`told "not sent", but it reached the agent: ${seen}`);
    } else if (reached === 1 && saysUnknown) {
      counts.told += 1;
      counts.toldReached += 1;
    } else if (reached === 1) {
      counts.outcomesExpected += 1;
      counts.lost += 1;
      details.push(`outcome lost: ${seen}`);
    } else if (outcomes === 0 && (saysUnknown || saysNotSent)) {
      counts.told += 1;
    } else {
      counts.lost += 1;
      details.push(`instruction lost: ${seen}`);
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
  ['toldReached', 'of which reached the agent'],
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

/**
 * With NOTIFY_CHANNEL_ID, NOTIFY_ON=all and NOTIFY_REQUESTER=dm: every outcome posted in a thread
 * is also told exactly once in the notification channel and exactly once to the requester
 * directly, unless the job's thread is itself in a direct message (then that thread tells the
 * requester, and no separate message may be sent). Returns how many of those were lost or doubled; `details` explains each.
 */
export function accountNotifications(
  slack: SlackStandIn,
  details: string[],
): { expected: number; lost: number; duplicates: number } {
  const counts = { expected: 0, lost: 0, duplicates: 0 };
  const keyOf = (m: StoredMessage) => String(m.metadata?.event_payload.key ?? '');
  const told = slack.messages.filter((m) => m.metadata?.event_type === 'docs_agent_notification');
  const outcomes = slack.messages.filter(
    (m) => m.metadata?.event_type === 'docs_agent_post' && aboutOf(m).kind === 'outcome',
  );
  for (const outcome of outcomes) {
    // `outcome:<run>:<job>` has its notification at `notify:<run>:<job>` and DM at `requester-dm:…`.
    const rest = keyOf(outcome).slice('outcome:'.length);
    const inDirectMessage = outcome.channel.startsWith('D');
    for (const [key, where, wanted] of [
      [`notify:${rest}`, (m: StoredMessage) => !m.channel.startsWith('D'), 1],
      [`requester-dm:${rest}`, (m: StoredMessage) => m.channel.startsWith('D'), inDirectMessage ? 0 : 1],
    ] as const) {
      counts.expected += wanted;
      const copies = told.filter((m) => keyOf(m) === key && where(m)).length;
      if (wanted === 0) {
        if (copies > 0) {
          counts.duplicates += 1;
          details.push(`notification doubled: ${key} sent beside a direct-message thread`);
        }
      } else if (copies > 1) {
        counts.duplicates += 1;
        details.push(`notification doubled: ${key} posted ${copies} times`);
      } else if (copies === 0) {
        counts.lost += 1;
        details.push(`notification lost: ${key}`);
      }
    }
  }
  return counts;
}
