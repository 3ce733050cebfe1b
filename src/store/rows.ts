import { z } from 'zod';
import { implicitRunKey } from '../domain/keys.js';
import type { JobPhase } from '../domain/phases.js';
import type { JobPrivacy } from '../domain/privacy.js';
import type { StoreFigures } from './areas.js';
import type { PullRequestFollowing, PullRequestRecord, PullRequestState } from './pull-request-records.js';
import type {
  JobOrigin,
  JobRecord,
  OutboxItem,
  RunKind,
  RunOutcome,
  RunRecord,
  RunState,
  StoredPayload,
} from './records.js';
import type { SlackPause } from './slack-pauses.js';
import type { CountedUses } from './uses.js';

/** A database row, snake_case columns. */
export type Row = Record<string, unknown>;

/** Thrown when a row does not have the columns its parser expects: the schema and the code disagree. */
export class RowShapeError extends Error {
  override name = 'RowShapeError';
  constructor(what: string, cause: unknown) {
    super(`a ${what} row does not have the expected columns: ${(cause as Error).message}`, { cause });
  }
}

/** Column names seen so far, converted once each: every row read would otherwise redo it per key. */
const camelKeys = new Map<string, string>();
const toCamel = (key: string) => {
  let camel = camelKeys.get(key);
  if (camel === undefined) {
    camel = key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    camelKeys.set(key, camel);
  }
  return camel;
};

/**
 * A parser of one row type: camelCase keys, every column checked. Strict but for the tables read
 * whole (see {@link TABLE_COLUMNS}), so a statement that reads a column its parser does not know
 * fails the first test that runs it.
 */
function parser<T>(what: string, schema: z.ZodType<T>): (row: Row) => T {
  return (row) => {
    const camel: Row = {};
    for (const key in row) camel[toCamel(key)] = row[key];
    const parsed = schema.safeParse(camel);
    if (!parsed.success) throw new RowShapeError(what, parsed.error);
    return parsed.data;
  };
}

const int = z.number().int();
const time = z.number().int();
const text = z.string();
/**
 * A text column holding one of a type's words. Only the store writes these, from typed values;
 * the words themselves are {@link JobPhase}'s and the others' in `types.ts`, not repeated here.
 */
const word = <T extends string>() => z.custom<T>((value) => typeof value === 'string');

/**
 * The columns of each table read whole (`SELECT *`), by their camelCase names. A column this
 * release does not know is passed over, not refused: a later release's migration adds columns
 * while instances of this one still run (an overlapping deploy). That these name every column of
 * this release's schema, no more and no fewer, is checked against the schema itself by its test.
 */
const jobColumns = {
  id: int,
  teamId: text,
  channelId: text,
  threadTs: text.nullable(),
  cardTs: text.nullable(),
  origin: word<JobOrigin>(),
  projectId: text.nullable(),
  contextTs: text.nullable(),
  rootReaction: text.nullable(),
  sessionStatus: text.nullable(),
  requesterId: text,
  instruction: text,
  triggerKey: text,
  responseUrl: text.nullable(),
  agentJobId: text.nullable(),
  phase: word<JobPhase>(),
  agentStatus: text.nullable(),
  prLink: text.nullable(),
  lastOutcome: word<RunOutcome>().nullable(),
  repository: text.nullable(),
  ref: text.nullable(),
  model: text.nullable(),
  runCount: int,
  nextPollAt: time.nullable(),
  pollIntervalMs: int,
  pollFailures: int,
  pollRefusals: int,
  runStartedAt: time.nullable(),
  lastError: text.nullable(),
  owner: text.nullable(),
  ownerUntil: time.nullable(),
  claimedBy: text.nullable(),
  claimedUntil: time.nullable(),
  erasedAt: time.nullable(),
  stoppedRun: int.nullable(),
  privacy: word<JobPrivacy>(),
  contextChannelId: text.nullable(),
  createdAt: time,
  updatedAt: time,
};

export const parseJob = parser<JobRecord>('job', z.object(jobColumns));

const runColumns = {
  id: int,
  jobId: int,
  seq: int,
  kind: word<RunKind>(),
  prompt: text,
  authorId: text,
  // Null in rows recorded before runs had keys (schema version 14), which keep their key implied.
  runKey: text.nullable(),
  messageTs: text.nullable(),
  state: word<RunState>(),
  error: text.nullable(),
  outcome: word<RunOutcome>().nullable(),
  owner: text.nullable(),
  ownerUntil: time.nullable(),
  teamId: text.nullable(),
  createdAt: time,
  reservedAt: time.nullable(),
  sentAt: time.nullable(),
  outcomeAt: time.nullable(),
};

export const parseRun = parser<RunRecord>(
  'run',
  z.object(runColumns).transform((run) => ({ ...run, runKey: run.runKey ?? implicitRunKey(run.messageTs) })),
);

/** The payload is JSON text on SQLite and JSONB (already an object) on PostgreSQL. */
const payload = z.preprocess(
  (value) => (typeof value === 'string' ? JSON.parse(value) : value),
  z.custom<StoredPayload>((value) => typeof (value as { type?: unknown } | null)?.type === 'string'),
);

const outboxColumns = {
  id: int,
  jobId: int.nullable(),
  dedupeKey: text.nullable(),
  // The payload's type, stored for the partial indexes; the item carries it in its payload.
  kind: text,
  payload,
  attempts: int,
  nextAttemptAt: time,
  startedAt: time.nullable(),
  deliveredAt: time.nullable(),
  deadAt: time.nullable(),
  lastError: text.nullable(),
  claimedBy: text.nullable(),
  claimedUntil: time.nullable(),
  createdAt: time,
};

export const parseOutboxItem = parser<OutboxItem>(
  'outbox',
  z.object(outboxColumns).transform(({ kind: _kind, ...item }) => item),
);

const pullRequestColumns = {
  id: int,
  jobId: int,
  projectId: text.nullable(),
  url: text,
  owner: text.nullable(),
  repo: text.nullable(),
  number: int.nullable(),
  state: word<PullRequestState>().nullable(),
  following: word<PullRequestFollowing>(),
  title: text.nullable(),
  mergedBy: text.nullable(),
  endedAt: time.nullable(),
  etag: text.nullable(),
  openedAt: time,
  nextCheckAt: time.nullable(),
  checkFailures: int,
  claimedBy: text.nullable(),
  claimedUntil: time.nullable(),
  updatedAt: time,
};

export const parsePullRequest = parser<PullRequestRecord>('pull request', z.object(pullRequestColumns));

/** The columns of each table read whole, by table: what the schema's test holds them to. */
export const TABLE_COLUMNS = {
  jobs: Object.keys(jobColumns),
  runs: Object.keys(runColumns),
  outbox: Object.keys(outboxColumns),
  pull_requests: Object.keys(pullRequestColumns),
};

/** A job's phase and run count, as `Change.expect` is checked. */
export const parseJobState = parser(
  'job state',
  z.strictObject({ phase: text, runCount: int, owner: text.nullable() }),
);
/** A count (`COUNT(*) AS n`). */
export const parseCount = parser('count', z.strictObject({ n: int }));
/** An earliest time (`MIN(…) AS at`), null when there is none. */
export const parseAt = parser('time', z.strictObject({ at: time.nullable() }));
export const parseSlackPause = parser<SlackPause>(
  'Slack pause',
  z.strictObject({ scope: z.string(), leftMs: int }),
);
/** How long a run took, in milliseconds. */
export const parseRunLength = parser('run length', z.strictObject({ lengthMs: int }));
/** The highest id (`MAX(id) AS id`), null when there is none. */
export const parseMaxId = parser('highest id', z.strictObject({ id: int.nullable() }));
/** An assistant thread: the channel its pane was last open beside, if any. */
export const parseAssistantThread = parser(
  'assistant thread',
  z.strictObject({ contextChannelId: z.string().nullable() }),
);
/** A job's thread. */
export const parseThread = parser('thread', z.strictObject({ threadTs: text }));
/** A row's id (`RETURNING id`, or a job's id). */
export const parseId = parser('id', z.strictObject({ id: int }));
/** A run just inserted: its id and its number in its job. */
export const parseRunNumber = parser('run number', z.strictObject({ id: int, seq: int }));
export const parseCountedUses = parser<CountedUses>(
  'counted uses',
  z.strictObject({ n: int, oldest: time.nullable() }),
);
export const parseProjectUses = parser(
  'uses per project',
  z.strictObject({ projectId: text.nullable(), n: int }),
);
export const parseUseOfRun = parser(
  'use of a run',
  z.strictObject({ authorId: text, reservedAt: time.nullable(), project: text }),
);
export const parseReservation = parser('reservation', z.strictObject({ reservedAt: time.nullable() }));
export const parseFigures = parser<Omit<StoreFigures, 'uses'>>(
  'figures',
  z.strictObject({
    activeJobs: int,
    earliestPollAt: time.nullable(),
    outboxBacklog: int,
    oldestUndeliveredAt: time.nullable(),
    liveInstances: int,
  }),
);
