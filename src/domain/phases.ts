/**
 * Where a job is in its life.
 * - `accepted`: recorded when the command arrived; nothing else done yet.
 * - `posting`: the status card is being posted.
 * - `creating`: the card posted, create call being made.
 * - `active`: the agent is working; the poller watches it.
 * - `idle`: the latest run ended; a follow-up can start another.
 * - `not_started`: the create call was refused or never sent; nothing runs upstream.
 * - `start_unknown`: the create call was sent and its answer lost; nobody can know if it ran.
 * - `gone`: the agent API no longer knows the job (404).
 * - `retried`: a person pressed "Try again"; a new job took its instruction and its thread.
 */
export type JobPhase =
  | 'accepted'
  | 'posting'
  | 'creating'
  | 'active'
  | 'idle'
  | 'not_started'
  | 'start_unknown'
  | 'gone'
  | 'retried';

/** Every phase, in the order of a job's life. */
export const JOB_PHASES: readonly JobPhase[] = [
  'accepted',
  'posting',
  'creating',
  'active',
  'idle',
  'not_started',
  'start_unknown',
  'gone',
  'retried',
];

/** The phase a job is recorded in. */
export const FIRST_PHASE = 'accepted' satisfies JobPhase;

/**
 * The allowed phase changes: from each phase, the phases a job may move to. Every change of a
 * job's phase is checked against it ({@link enterPhase}, {@link moveJob}).
 */
export const TRANSITIONS = {
  // Access granted and the card being posted; or refused (length, access, limits, verification).
  accepted: ['posting', 'not_started'],
  // Card posted; or Slack refused it, or a restart left it unknown; a restart that finds Slack
  // surely has no card starts over.
  posting: ['creating', 'not_started', 'accepted'],
  // The agent took the job; refused it; or its answer was lost (or a restart came in between).
  creating: ['active', 'not_started', 'start_unknown'],
  // A follow-up sent while the agent works starts a new run; the run ends; or the agent forgot it.
  active: ['active', 'idle', 'gone'],
  // A follow-up starts another run; or, sending it, the agent API no longer knows the job; or,
  // after a failed run, the job is tried again as a new one.
  idle: ['active', 'gone', 'retried'],
  // Nothing runs upstream and nothing can start again: a new job is started instead, by "Try
  // again" (which takes the thread) or by a new instruction.
  not_started: ['retried'],
  start_unknown: ['retried'],
  gone: [],
  retried: [],
} as const satisfies Record<JobPhase, readonly JobPhase[]>;

/** Phases `F` may move to, by {@link TRANSITIONS}. */
export type NextPhase<F extends JobPhase> = (typeof TRANSITIONS)[F][number];
/** Phases from which a job may move to `P`. */
type PhasesBefore<P extends JobPhase> = { [K in JobPhase]: P extends NextPhase<K> ? K : never }[JobPhase];
/** Phases every one of `F` may move to: a change from a phase known only as one of `F`. */
export type CommonNextPhase<F extends JobPhase> = {
  [P in JobPhase]: [F] extends [PhasesBefore<P>] ? P : never;
}[JobPhase];

/** A set of phases whose `has` narrows the phase it is asked about. */
export interface PhaseSet<S extends JobPhase> extends ReadonlySet<JobPhase> {
  has(phase: JobPhase): phase is S;
}
const phaseSet = <const S extends JobPhase>(...phases: S[]): PhaseSet<S> =>
  new Set<JobPhase>(phases) as ReadonlySet<JobPhase> as PhaseSet<S>;

/** Jobs still being started: the status card's post and the create call. Recovery takes them over. */
export const STILL_STARTING = phaseSet('accepted', 'posting', 'creating');
/** Jobs that exist upstream and take follow-ups: the agent works, or waits for the next one. */
export const TAKES_FOLLOW_UPS = phaseSet('active', 'idle');
/** Jobs the poller watches: the agent is working on their latest run. */
export const POLLED = phaseSet('active');
/**
 * Jobs with no way on ({@link TRANSITIONS} lists no exit but being tried again as a new job): a
 * follow-up to them is refused.
 */
export const NO_WAY_ON = phaseSet('not_started', 'start_unknown', 'gone', 'retried');
/**
 * Phases of a job that gives its thread up to a new job started there: it never ran, the agent
 * API forgot it, or it was tried again. Any other job keeps its thread (a mention there is a
 * follow-up).
 */
export const THREAD_RELEASING_PHASES = phaseSet('not_started', 'gone', 'retried');
/** Jobs with nothing running or being started: what retention may erase. */
export const AT_REST = phaseSet('idle', 'not_started', 'start_unknown', 'gone', 'retried');
/** Phases a job may be tried again from ("Try again"), see {@link mayRetry}. */
export const RETRYABLE = phaseSet('idle', 'not_started', 'start_unknown');

/**
 * Whether a job may be tried again as a new job in its thread: its latest run failed, its
 * create call failed, or nobody can tell whether it started. Its instruction must still be kept
 * (retention erases it).
 */
export function mayRetry(job: {
  phase: JobPhase;
  lastOutcome: string | null;
  erasedAt: number | null;
}): boolean {
  if (job.erasedAt !== null || !RETRYABLE.has(job.phase)) return false;
  return job.phase !== 'idle' || job.lastOutcome === 'failed';
}

/** A phase change {@link TRANSITIONS} does not allow: a programming error, never a user's. */
export class IllegalPhaseChangeError extends Error {
  override readonly name = 'IllegalPhaseChangeError';
  constructor(
    readonly from: JobPhase,
    readonly to: JobPhase,
  ) {
    super(`a job cannot move from ${from} to ${to}`);
  }
}

/** A job found in a phase its caller cannot handle: a programming error. */
export class UnexpectedPhaseError extends Error {
  override readonly name = 'UnexpectedPhaseError';
  constructor(
    readonly phase: JobPhase,
    readonly expected: readonly JobPhase[],
  ) {
    super(`job is ${phase}, expected one of ${expected.join(', ')}`);
  }
}

/** Whether {@link TRANSITIONS} allows a job to move from `from` to `to`. */
export function canMove(from: JobPhase, to: JobPhase): boolean {
  return (TRANSITIONS[from] as readonly JobPhase[]).includes(to);
}

/**
 * The job patch that moves a job from `from` to `to`. The compiler holds `to` to the table;
 * a phase that got past it (read from the store) is checked here. Throws
 * {@link IllegalPhaseChangeError} when the table does not allow the change.
 */
export function enterPhase<F extends JobPhase, T extends CommonNextPhase<F>>(from: F, to: T): { phase: T } {
  if (!canMove(from, to)) throw new IllegalPhaseChangeError(from, to);
  return { phase: to };
}

/**
 * Moves a job from `from` to `to` in the store, checked as {@link enterPhase}; false when the
 * job was no longer in `from` (someone else moved it).
 */
export function moveJob<F extends JobPhase>(
  store: { transitionJob(jobId: number, from: JobPhase, to: JobPhase, now: number): Promise<boolean> },
  jobId: number,
  from: F,
  to: CommonNextPhase<F>,
  now: number,
): Promise<boolean> {
  enterPhase(from, to);
  return store.transitionJob(jobId, from, to, now);
}

/** Narrows a job's phase to the ones its caller handles; throws {@link UnexpectedPhaseError} otherwise. */
export function expectPhase<S extends JobPhase>(phase: JobPhase, expected: PhaseSet<S>): S {
  if (!expected.has(phase)) throw new UnexpectedPhaseError(phase, [...expected]);
  return phase;
}

/** A set of phases as an SQL list (`'a', 'b'`). Phases are fixed identifiers: nothing to escape. */
export const sqlList = (phases: Iterable<JobPhase>): string =>
  [...phases].map((phase) => `'${phase}'`).join(', ');
