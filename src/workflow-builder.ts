import type { Config } from './config/config.js';
import { createStepSender, type StepSenderOptions } from './delivery/kinds/workflow-step.js';
import type { Logger } from './logging/logger.js';
import type { SlackCaller } from './slack/caller.js';
import { createStepCompleter } from './slack/function-steps.js';
import type { Identity } from './slack/identity.js';
import { gated, type YieldGate } from './util/yield-gate.js';

/**
 * The app's Workflow Builder answers: the completer (which keeps each execution's token, for the
 * listeners) and the outbox's sender, whose Slack calls wait for the requests in flight. A "Wait
 * for a docs agent job" step looks at its job as often as the poller polls it.
 */
export function createWorkflowSteps(options: {
  caller: SlackCaller;
  store: StepSenderOptions['store'];
  identity: Pick<Identity, 'get'>;
  logger: Logger;
  gate: YieldGate;
  config: { poll: Pick<Config['poll'], 'intervalMs'> } & Pick<Config, 'prLinkHosts'>;
}) {
  const completer = createStepCompleter(options.caller);
  const sender = createStepSender({
    store: options.store,
    steps: gated(completer, options.gate),
    workspaceUrl: async () => (await options.identity.get())?.url,
    logger: options.logger,
    checkEveryMs: options.config.poll.intervalMs,
    hints: { prLinkHosts: options.config.prLinkHosts },
    now: Date.now,
  });
  return { completer, sender };
}
