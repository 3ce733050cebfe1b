import { HOUR_MS } from '../../access/access-policy.js';
import { readQualityFigures } from '../../blocks/figures.js';
import { jobListMessage, LIST_LIMIT } from '../../blocks/job-list.js';
import type { RenderHints } from '../../blocks/messages.js';
import { type Config, type ProjectSettings, servedProjects } from '../../config/config.js';
import { mayShowJob } from '../../domain/privacy.js';
import type { Health } from '../../http/health.js';
import type { Block } from '../../slack/blocks.js';
import type { Identity } from '../../slack/identity.js';
import { type Mrkdwn, md } from '../../slack/mrkdwn.js';
import type {
  ClusterStore,
  FeedbackStore,
  JobsStore,
  PullRequestsStore,
  StoreLifecycle,
  UsesStore,
} from '../../store/types.js';
import type { Command } from './listener.js';
import { REASONS_SHOWN, statusReport } from './status-report.js';

/**
 * How many of the latest reasons the status reads to find those the viewer may see: the rest
 * are counted as withheld, not searched for further back.
 */
const REASONS_READ = 20;

/** What the subcommands' answers read: the store's views, this instance's health, the settings. */
export interface AnswerDeps {
  store: Pick<JobsStore, 'recentJobs' | 'countActiveJobs'> &
    Pick<UsesStore, 'instructionsSince'> &
    Pick<ClusterStore, 'liveInstances'> &
    Pick<FeedbackStore, 'feedbackTotals' | 'feedbackReasons'> &
    Pick<PullRequestsStore, 'pullRequestSummaries'> &
    Pick<StoreLifecycle, 'shared'>;
  config: ProjectSettings & Pick<Config, 'instanceTimeoutMs' | 'github'>;
  health: Pick<Health, 'pollerRunning' | 'lastAgentSuccessAt' | 'startedAt'>;
  hints: Pick<RenderHints, 'prLinkHosts'>;
  identity: Pick<Identity, 'peek'>;
}

/** A subcommand's private answer to the person who asked, in the command's acknowledgement. */
export type Answer = (deps: AnswerDeps, body: Command) => Promise<{ text: Mrkdwn; blocks: Block[] }>;

/**
 * A read-only subcommand, named by the first word after `/docs-agent`. The command answers it
 * only to people who may use the bot, masked as everything the bot shows (`listener.ts`).
 */
export interface Subcommand {
  /** Its entries in the help's list of subcommands (`/docs-agent help`, the App Home). */
  help: readonly Mrkdwn[];
  /**
   * What the words after its name ask for: the answer; `unknown` for words it does not take,
   * told as a subcommand it does not know; undefined when they make the text an instruction.
   */
  read(rest: readonly string[]): Answer | 'unknown' | undefined;
}

/** The workspace's address: auth.test's, else the one the command's domain names. */
const workspaceUrlOf = (deps: AnswerDeps, body: Command): string | undefined =>
  deps.identity.peek()?.url ?? (body.team_domain ? `https://${body.team_domain}.slack.com/` : undefined);

/** `/docs-agent list` and `list channel`: recent jobs with links to their threads and PRs. */
const list =
  (scope: 'mine' | 'channel'): Answer =>
  async (deps, body) => {
    const jobs = await deps.store.recentJobs(
      scope === 'mine' ? { requesterId: body.user_id } : { channelId: body.channel_id },
      LIST_LIMIT,
    );
    const workspaceUrl = workspaceUrlOf(deps, body);
    return jobListMessage(
      jobs,
      scope === 'mine' ? { kind: 'mine' } : { kind: 'channel', channelId: body.channel_id },
      {
        workspaceUrl,
        now: Date.now(),
        prLinkHosts: deps.hints.prLinkHosts,
        // Shown only to the person who asked, in the conversation they asked in.
        viewer: { userId: body.user_id, channelId: body.channel_id },
      },
    );
  };

/** `/docs-agent status`: the projects' agent quota this hour and the bot's health. */
const status: Answer = async (deps, body) => {
  const now = Date.now();
  const [used, activeJobs, instances, figures, latest] = await Promise.all([
    deps.store.instructionsSince(now - HOUR_MS),
    deps.store.countActiveJobs(),
    deps.store.shared ? deps.store.liveInstances(deps.config.instanceTimeoutMs) : Promise.resolve(1),
    readQualityFigures({
      store: deps.store,
      defaultProject: deps.config.agent.projectId,
      following: deps.config.github.token !== undefined,
    }),
    deps.store.feedbackReasons(REASONS_READ),
  ]);
  // The privacy rule of the lists: a private job's words are shown only to its own people.
  const viewer = { userId: body.user_id, channelId: body.channel_id };
  const visible = latest.filter((r) => mayShowJob(r.job, viewer));
  return statusReport({
    projects: servedProjects(deps.config),
    defaultProject: deps.config.agent.projectId,
    used,
    activeJobs,
    pollerRunning: deps.health.pollerRunning(),
    lastAgentSuccessAt: deps.health.lastAgentSuccessAt(),
    startedAt: deps.health.startedAt,
    instances: Math.max(1, instances),
    figures,
    reasons: { shown: visible.slice(0, REASONS_SHOWN), withheld: latest.length - visible.length },
    workspaceUrl: workspaceUrlOf(deps, body),
    now,
  });
};

/** Which jobs `list` shows, by the word after it: none, `mine` or `me`, `channel` or `here`. */
const LIST_SCOPES = new Map<string | undefined, 'mine' | 'channel'>([
  [undefined, 'mine'],
  ['mine', 'mine'],
  ['me', 'mine'],
  ['channel', 'channel'],
  ['here', 'channel'],
]);

/** The read-only subcommands, by name, in the order the help lists them. */
export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  list: {
    help: [md`\`/docs-agent list\` your recent jobs`, md`\`/docs-agent list channel\` this channel’s`],
    read: (rest) => {
      // More words than a scope: an instruction that starts with "list".
      if (rest.length > 1) return undefined;
      const scope = LIST_SCOPES.get(rest[0]);
      return scope ? list(scope) : 'unknown';
    },
  },
  status: {
    help: [md`\`/docs-agent status\` quota and health`],
    // `status` and more words: an instruction.
    read: (rest) => (rest.length === 0 ? status : undefined),
  },
};

/** What the text after `/docs-agent` asks for. */
export type CommandText =
  | { kind: 'help' }
  | { kind: 'subcommand'; name: string; answer: Answer }
  | { kind: 'unknown_subcommand'; word: string }
  | { kind: 'instruction'; text: string };

const HELP_WORDS = new Set(['', 'help', '-h', '--help', '?']);
/**
 * Words that read as a subcommand rather than an instruction when they stand alone, besides the
 * subcommands' own names. Kept short: a one-word instruction such as "Proofread" must still
 * start a job.
 */
const SUBCOMMAND_WORDS = new Set(['cancel', 'stop', 'config', 'settings', 'version', 'login', 'logout']);

export function parseCommandText(raw: string): CommandText {
  const text = raw.trim();
  const lower = text.toLowerCase();
  if (HELP_WORDS.has(lower)) return { kind: 'help' };
  const [name = '', ...rest] = lower.split(/\s+/);
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  const answer = subcommand?.read(rest);
  if (answer === 'unknown') return { kind: 'unknown_subcommand', word: text };
  if (answer) return { kind: 'subcommand', name, answer };
  if (/^--?[a-z][\w-]*$/i.test(text) || SUBCOMMAND_WORDS.has(lower))
    return { kind: 'unknown_subcommand', word: text };
  return { kind: 'instruction', text };
}
