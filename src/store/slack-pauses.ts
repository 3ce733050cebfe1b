import { parseSlackPause } from './rows.js';
import type { Statements } from './statements.js';

/**
 * Slack's rate-limit waits, shared by the instances of one store: what Slack told one instance to
 * wait out (a 429's `Retry-After`, for a method or a channel's posts), the others wait out too,
 * instead of each meeting the limit on its own (`slack/limits.ts`). Kept on the store's clock, so
 * instances whose clocks disagree agree on when a wait ends.
 */
export interface SlackPausesStore {
  /** Records that Slack asked to wait `waitMs` before calling `scope` again; the longest wait told holds. */
  pauseSlack(scope: string, waitMs: number): Promise<void>;
  /** The waits still running, each with how long it has left. */
  slackPauses(): Promise<SlackPause[]>;
}

export interface SlackPause {
  scope: string;
  leftMs: number;
}

export const SLACK_PAUSE_QUERIES = {
  pauseSlack: `
    INSERT INTO slack_pauses (scope, until_at) VALUES (:scope, {{now}} + :waitMs)
    ON CONFLICT (scope) DO UPDATE SET until_at = excluded.until_at
      WHERE excluded.until_at > slack_pauses.until_at`,
  slackPauses: 'SELECT scope, until_at - {{now}} AS left_ms FROM slack_pauses WHERE until_at > {{now}}',
} as const;

/** The Slack pauses' methods, written once for both engines over their {@link Statements}. */
export function slackPauseMethods(run: Pick<Statements, 'many' | 'write'>): SlackPausesStore {
  return {
    async pauseSlack(scope, waitMs) {
      await run.write('pauseSlack', { scope, waitMs: Math.max(0, Math.round(waitMs)) });
    },
    slackPauses: async () => run.many('slackPauses', {}, parseSlackPause),
  };
}
