import type { Logger } from './logging/logger.js';
import type { Identity } from './slack/identity.js';
import { warmUpAckPath } from './slack/warm-up.js';
import { rehearseInserts } from './store/rehearsal.js';
import type { StoreLifecycle } from './store/types.js';
import { withTimeout } from './util/waits.js';

/** Longest start-up waits for Slack's `auth.test` before saying ready anyway, in milliseconds. */
const IDENTITY_WAIT_MS = 500;

/**
 * What start-up does before `/healthz` says ready, so that the first commands cost what later
 * ones do: the insert a command makes rehearsed (and rolled back) until compiled, the connection
 * to Slack opened (bounded: a slow Slack never holds up the start), and signed commands sent
 * through the real receiver from a direct message, where a command starts nothing.
 */
export async function warmStart(options: {
  store: Pick<StoreLifecycle, 'rehearseInsert'>;
  logger: Logger;
  instanceId: string;
  pollIntervalMs: number;
  identity: Pick<Identity, 'get'>;
  port: number;
  /** Set in HTTP mode: the receiver is warmed with requests signed with it. */
  signingSecret: string | undefined;
}): Promise<WarmStart> {
  const started = performance.now();
  const rehearsals = await rehearseInserts(options.store, {
    ...options,
    onError: (error) => options.logger.warn('could not rehearse the insert of a command', { error }),
  });
  await withTimeout(options.identity.get(), IDENTITY_WAIT_MS).catch(() => undefined);
  const requests =
    options.signingSecret === undefined
      ? 0
      : await warmUpAckPath({ port: options.port, signingSecret: options.signingSecret });
  return { rehearsals, requests, ms: Math.round(performance.now() - started) };
}

/** What the warm start did, for the log line that says the app is ready. */
export interface WarmStart {
  /** Inserts rehearsed (and rolled back). */
  rehearsals: number;
  /** Warm-up commands answered by the receiver. */
  requests: number;
  ms: number;
}
