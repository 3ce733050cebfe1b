import { createAccessPolicy } from './access/access-policy.js';
import { agentsPerProject } from './agent/client.js';
import type { RenderHints } from './blocks/messages.js';
import { type Membership, newInstanceId } from './cluster/membership.js';
import { type Config, projectForChannel, projectOfRecord, secretsOf } from './config/config.js';
import { notifyChannelFor } from './config/fields.js';
import { createOutbox } from './delivery/outbox.js';
import { createAgentSessions } from './delivery/sessions.js';
import { usage as guide } from './features/command/wording.js';
import { feedbackBlock } from './features/feedback/buttons.js';
import { createHomePublisher } from './home/home-publisher.js';
import { createHealth } from './http/health.js';
import { leasesFor, outboxWrites } from './jobs/job-context.js';
import { createJobService } from './jobs/job-service.js';
import { createRunOutcomes } from './jobs/outcomes.js';
import { createWorkflowSteps } from './jobs/workflow-steps.js';
import { createLogger, createRedactor, type Logger } from './logging/logger.js';
import { setUpMetrics } from './metrics/metrics.js';
import { createRequestBudget } from './poller/budget.js';
import { createPoller } from './poller/poller.js';
import { type FollowingOptions, followPullRequests } from './pull-requests/following.js';
import { createSlackCaller } from './slack/caller.js';
import { slackClientOptions } from './slack/client-options.js';
import { createChannelAudiences, createUserNames } from './slack/directory.js';
import { createSlackGateway } from './slack/gateway.js';
import { createIdentity } from './slack/identity.js';
import { createSlackLimits, shareSlackLimits } from './slack/limits.js';
import { BotWebClient } from './slack/web-client.js';
import { createCheckpointLoop, openStore } from './store/lifecycle.js';
import { createRetentionSweep } from './store/retention.js';
import type { Store } from './store/types.js';
import type { TaskTracker, TaskTrackerOptions } from './util/tasks.js';
import { createYieldGate, gated } from './util/yield-gate.js';

// The build sections of the composition root, in the order `startApp` runs them (the foundation,
// Slack as the app calls it, the work, the receiver), each handed what the ones before it built.

export interface StartOptions extends FollowingOptions {
  logger?: Logger;
  /** Store to use instead of opening `config.databasePath`. */
  store?: Store;
  /** Bounds of the background work (tests make them small); the defaults are in `util/tasks.ts`. */
  tasks?: TaskTrackerOptions;
  /** First wait before an instruction waiting for verification is checked again (tests make it short); default `VERIFICATION_FIRST_RETRY_MS`. */
  verificationRetryMs?: number;
}

/** What every part is built on: settings derived once, the store, metrics and the yield gate. */
export async function buildFoundation(config: Config, options: StartOptions) {
  const logger = options.logger ?? createLogger({ level: config.logLevel, secrets: secretsOf(config) });
  // The logs' redaction masks all the bot shows in Slack too: an agent API or proxy may echo a secret.
  const redact = createRedactor(secretsOf(config));
  const store = options.store ?? (await openStore(config, logger));
  const instanceId = newInstanceId();
  const metrics = setUpMetrics(config, store, logger);
  // Slack's requests go first: background tasks, deliveries, polls and every Slack or agent API
  // call of background work wait for a quiet moment (see util/yield-gate.ts).
  const gate = createYieldGate();
  const hints: RenderHints = {
    mode: config.followUps.mode,
    asideMarker: config.followUps.asideMarker,
    prLinkHosts: config.prLinkHosts,
  };
  return { config, options, logger, redact, store, instanceId, metrics, gate, hints };
}
export type Foundation = Awaited<ReturnType<typeof buildFoundation>>;

/**
 * Slack as the app calls it: client and caller, the bot's identity, the gateway in front and behind
 * the gate. The workspace's rate limits are shared by the instances running (`membership`).
 */
export function buildSlackSide(
  { config, logger, redact, metrics, gate, store }: Foundation,
  membership: Pick<Membership, 'liveCount'>,
) {
  const client = new BotWebClient(config.slack.botToken, slackClientOptions(config, logger, 'web-api'));
  const liveCount = () => membership.liveCount();
  const shared = shareSlackLimits({ store, logger, liveCount });
  const limits = createSlackLimits({ instances: liveCount, tell: shared.tell });
  const caller = createSlackCaller({ client, logger, redact, onError: metrics.hooks.slackError, limits });
  const identity = createIdentity(caller, logger);
  const ownBotId = () => identity.peek()?.botId;
  const slack = createSlackGateway({ caller, ownBotId });
  void identity.get();
  const names = createUserNames(slack, logger);
  /** Slack as background work sees it: each call one slice, after the requests in flight. */
  const backgroundSlack = gated(slack, gate);
  // Asked as jobs start and as their outcomes are told elsewhere: background work, never an ack.
  const audiences = createChannelAudiences({ slack: backgroundSlack, logger });
  // Reads the waits Slack told the other instances about, for this one to keep to them too.
  const sharedWaits = shared.loop(limits);
  return { caller, identity, slack, backgroundSlack, names, audiences, sharedWaits };
}
export type SlackSide = ReturnType<typeof buildSlackSide>;

/** The work: access, the outbox, outcomes, the poller and the job service, and the upkeep loops. */
export function buildWork(
  base: Foundation,
  side: SlackSide,
  tasks: TaskTracker,
  membership: Pick<Membership, 'liveCount'>,
) {
  const { config, store, logger, gate } = base;
  const { caller, identity, backgroundSlack } = side;
  // Claims last as long as the calls they guard (see cluster/membership.ts).
  const leases = leasesFor(config.agent.timeoutMs);
  // POLL_MAX_RPS is the deployment's budget: instances sharing a store split it.
  const budget = createRequestBudget({ rate: () => config.poll.maxRps / membership.liveCount() });
  const health = createHealth();
  const agentFor = buildAgents(base, budget, health);
  const access = createAccessPolicy({
    config: config.access,
    identity,
    slack: side.slack,
    store,
    logger,
    defaultProject: config.agent.projectId,
  });
  // Built bottom-up, each part handed what it calls: the outbox first (everything queues posts
  // for it), then the outcomes the poller records, the poller, and the job service that wakes both.
  const home = buildHome(base, { access, slack: backgroundSlack, identity });
  // Workflow Builder steps are answered by the outbox, once each (see jobs/workflow-steps.ts).
  const steps = createWorkflowSteps({ caller, store, identity, logger, gate, config });
  const outbox = buildOutbox(base, side, { home, steps, leases });
  const outcomes = buildOutcomes(base, side, outbox);
  const poller = buildPoller(base, { agentFor, outcomes, budget, leases });
  const jobs = buildJobs(base, side, tasks, { outbox, poller, access, leases, agentFor });
  const retention = createRetentionSweep({ store, logger, retentionDays: config.retentionDays });
  const checkpoints = createCheckpointLoop({ store, logger, gate });
  const following = followPullRequests(base, outbox, membership);

  return { health, access, home, steps, outbox, outcomes, poller, jobs, retention, checkpoints, following };
}

/**
 * The App Home's publisher, with what the command feature contributes to it: its help, shown
 * under the jobs.
 */
export function buildHome(
  base: Omit<Parameters<typeof createHomePublisher>[0], 'access' | 'slack' | 'identity' | 'guide'>,
  parts: Pick<Parameters<typeof createHomePublisher>[0], 'access' | 'slack' | 'identity'>,
) {
  return createHomePublisher({ ...base, ...parts, guide });
}

type Leases = ReturnType<typeof leasesFor>;
type AgentFor = ReturnType<typeof agentsPerProject>;

/** One client per documentation project (CHANNEL_PROJECTS), sharing the request budget. */
function buildAgents(
  { config, logger, redact, metrics, gate }: Foundation,
  budget: ReturnType<typeof createRequestBudget>,
  health: ReturnType<typeof createHealth>,
) {
  return agentsPerProject({
    baseUrl: config.agent.apiUrl,
    apiKey: config.agent.apiKey,
    defaultProject: config.agent.projectId,
    timeoutMs: config.agent.timeoutMs,
    logger,
    redact,
    getBudget: budget,
    onAnswer: health.agentAnswered,
    onRequest: metrics.hooks.agentRequest,
    wrap: (agent) => gated(agent, gate),
  });
}

function buildOutbox(
  { store, instanceId, logger, hints, metrics, gate }: Foundation,
  { caller, backgroundSlack }: SlackSide,
  parts: {
    home: ReturnType<typeof createHomePublisher>;
    steps: ReturnType<typeof createWorkflowSteps>;
    leases: Leases;
  },
) {
  return createOutbox({
    steps: parts.steps.sender,
    store,
    instanceId,
    slack: backgroundSlack,
    sessions: gated(createAgentSessions(caller), gate),
    logger,
    hints,
    home: parts.home,
    onGivenUp: metrics.hooks.outboxGivenUp,
    gate,
    lease: parts.leases.delivery,
  });
}

function buildOutcomes(
  { config, store, logger, metrics, hints }: Foundation,
  { identity, audiences }: SlackSide,
  outbox: ReturnType<typeof createOutbox>,
) {
  return createRunOutcomes({
    store,
    logger,
    metrics: metrics.hooks,
    now: Date.now,
    hints,
    settings: config,
    ...outboxWrites(store, outbox),
    audiences,
    belowOutcome: (jobId, runSeq) => [feedbackBlock(jobId, runSeq)],
    notify: {
      channelFor: (projectId) =>
        notifyChannelFor(config.notify.channels, projectOfRecord(projectId, config.agent.projectId)),
      on: config.notify.on,
      requester: config.notify.requester,
      privateJobs: config.notify.privateJobs,
      workspaceUrl: async () => (await identity.get())?.url,
    },
  });
}

function buildPoller(
  { config, store, instanceId, logger, gate }: Foundation,
  parts: {
    agentFor: AgentFor;
    outcomes: ReturnType<typeof createRunOutcomes>;
    budget: ReturnType<typeof createRequestBudget>;
    leases: Leases;
  },
) {
  return createPoller({
    store,
    instanceId,
    agentFor: parts.agentFor,
    outcomes: parts.outcomes,
    logger,
    settings: config.poll,
    budget: parts.budget,
    gate,
    lease: parts.leases.agentRead,
  });
}

function buildJobs(
  { config, options, store, instanceId, logger, hints, metrics }: Foundation,
  { identity, backgroundSlack, names, audiences }: SlackSide,
  tasks: TaskTracker,
  parts: {
    outbox: ReturnType<typeof createOutbox>;
    poller: ReturnType<typeof createPoller>;
    access: ReturnType<typeof createAccessPolicy>;
    leases: Leases;
    agentFor: AgentFor;
  },
) {
  return createJobService({
    store,
    instanceId,
    settings: config,
    loops: { outbox: parts.outbox, poller: parts.poller },
    access: parts.access,
    leases: parts.leases,
    verificationRetryMs: options.verificationRetryMs,
    agentFor: parts.agentFor,
    projectFor: (channelId) => projectForChannel(config, channelId),
    names,
    hints,
    botUserId: async () => (await identity.get())?.botUserId,
    slack: backgroundSlack,
    audiences,
    logger,
    runTask: (name, work) => tasks.run(name, work),
    metrics: metrics.hooks,
  });
}
export type Work = ReturnType<typeof buildWork>;
