import type { AccessPolicy } from '../access/access-policy.js';
import type { RenderHints } from '../blocks/messages.js';
import type { Config } from '../config/config.js';
import type { HomePublisher } from '../home/home-publisher.js';
import type { Health } from '../http/health.js';
import type { OutboxWrites } from '../jobs/job-context.js';
import type { JobService } from '../jobs/job-service.js';
import type { MetricsHooks } from '../jobs/metrics-hooks.js';
import type { Logger, Redact } from '../logging/logger.js';
import type { UserNames } from '../slack/directory.js';
import type { StepCompleter } from '../slack/function-steps.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import type {
  AssistantThreadsStore,
  ClusterStore,
  FeedbackStore,
  HomeViewsStore,
  JobsStore,
  PullRequestsStore,
  RunsStore,
  StoreLifecycle,
  UsesStore,
} from '../store/types.js';
import type { TaskTracker } from '../util/tasks.js';

/** What every listener is given. Listeners parse, acknowledge, and hand over; no business rules. */
export interface ListenerDeps {
  /**
   * Who may use the bot: reports (list, status) answer only them, only their feedback votes
   * count, and only they may stop someone else's job.
   */
  access: Pick<AccessPolicy, 'check'>;
  jobs: JobService;
  tasks: TaskTracker;
  logger: Logger;
  /** The outbox writes (write, then wake) of a surface that records itself (a stop tells its thread). */
  outbox: OutboxWrites;
  /**
   * What a surface that records itself reports, for the metrics endpoint (a feedback vote, an
   * instruction the store could not record).
   */
  metrics: Pick<MetricsHooks, 'feedback' | 'instruction'>;
  /**
   * Read-only views (lists, status, App Home) read the store directly, and so does what a
   * surface records itself (feedback: `getJob`, `getRuns` and its own area; a stop:
   * `findJobByThread`, `getJob`, `getRuns`; an edit or deletion: `threadOfOpenMessage` too).
   */
  store: Pick<
    JobsStore,
    'findJobByThread' | 'threadOfOpenMessage' | 'countActiveJobs' | 'recentJobs' | 'getJob'
  > &
    Pick<RunsStore, 'getRuns'> &
    Pick<AssistantThreadsStore, 'assistantThread' | 'recordAssistantThread'> &
    Pick<HomeViewsStore, 'recordHomeOpened'> &
    FeedbackStore &
    Pick<PullRequestsStore, 'pullRequestSummaries'> &
    Pick<UsesStore, 'instructionsSince'> &
    Pick<ClusterStore, 'liveInstances'> &
    Pick<StoreLifecycle, 'shared'>;
  slack: SlackGateway;
  identity: Identity;
  home: HomePublisher;
  health: Health;
  config: Pick<
    Config,
    | 'agent'
    | 'channelProjects'
    | 'followUps'
    | 'github'
    | 'maxPromptChars'
    | 'access'
    | 'instanceTimeoutMs'
    | 'suggestedPrompts'
    | 'threadContextMaxChars'
    | 'workflowOnBehalfOf'
  >;
  hints: RenderHints;
  names: UserNames;
  /** The logs' redaction, for answers built here (reports); the gateway masks what it sends itself. */
  redact: Redact;
  /** Keeps the token each Workflow Builder step execution carries, to answer it with. */
  steps: Pick<StepCompleter, 'remember'>;
  /** Socket Mode acknowledges events before listeners run: Slack will not deliver them again. */
  socketMode: boolean;
}
