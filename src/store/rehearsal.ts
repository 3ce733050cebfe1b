import { triggerKeys } from '../domain/keys.js';
import type { NewJob, NewRun, Store } from './types.js';

/**
 * Thrown inside a rehearsal's transaction so that the transaction rolls back. It never leaves
 * the store: {@link Store.rehearseInsert} swallows it and rethrows anything else.
 */
export class RehearsalUndone extends Error {
  override name = 'RehearsalUndone';
  constructor() {
    super('insert rehearsed and rolled back');
  }
}

/**
 * Runs `work`, which ends its transaction by throwing {@link RehearsalUndone}: that one is
 * swallowed (the rollback was the point), anything else is thrown on.
 */
export async function undone(work: () => unknown): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof RehearsalUndone)) throw error;
  }
}

/** Inserts rehearsed before ready, at most: enough for V8 to compile the insert path fully. */
export const REHEARSALS = 200;
/** Longest the rehearsals may take, in milliseconds (a slow database server gets fewer). */
export const REHEARSAL_BUDGET_MS = 100;

/**
 * A command's job and first run as the ack path records them, under a key no command has. Every
 * field has the type a command's has (a response URL, a project), so the code compiled here fits
 * the real inserts: a null where they bring a string would have it thrown away and recompiled.
 */
function rehearsalJob(instanceId: string, i: number, pollIntervalMs: number): [NewJob, NewRun] {
  const instruction = 'Rehearsal of the insert path; rolled back';
  return [
    {
      teamId: 'T0REHEARSAL',
      channelId: 'C0REHEARSAL',
      requesterId: 'U0REHEARSAL',
      instruction,
      triggerKey: triggerKeys.rehearsal(instanceId, i),
      responseUrl: `https://hooks.slack.com/commands/T0REHEARSAL/${i}/rehearsal`,
      projectId: 'rehearsal',
      pollIntervalMs,
      owner: instanceId,
    },
    { kind: 'create', prompt: instruction, authorId: 'U0REHEARSAL', messageTs: null, owner: instanceId },
  ];
}

/**
 * Runs the insert of a command's job over and over, each time rolled back, until
 * {@link REHEARSALS} are done or {@link REHEARSAL_BUDGET_MS} has passed: the first commands
 * after start-up then find the statements prepared and the code compiled. Returns how many ran.
 * Never rejects: a failed rehearsal only leaves the first commands slower.
 */
export async function rehearseInserts(
  store: Pick<Store, 'rehearseInsert'>,
  options: {
    instanceId: string;
    pollIntervalMs: number;
    budgetMs?: number;
    now?: () => number;
    /** Told of the failure that ended the rehearsals early. */
    onError?: (error: unknown) => void;
  },
): Promise<number> {
  const now = options.now ?? Date.now;
  const deadline = performance.now() + (options.budgetMs ?? REHEARSAL_BUDGET_MS);
  let done = 0;
  try {
    while (done < REHEARSALS && performance.now() < deadline) {
      const [job, run] = rehearsalJob(options.instanceId, done, options.pollIntervalMs);
      await store.rehearseInsert(job, run, now());
      done += 1;
    }
  } catch (error) {
    // Reported, not thrown: the first real command meets the store as it is and explains.
    options.onError?.(error);
  }
  return done;
}
