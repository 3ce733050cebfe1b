import type { App } from '@slack/bolt';
import type { ListenerDeps } from '../types.js';
import { START_STEP_CALLBACK_ID, startJobStep } from './start-job-step.js';
import { WAIT_STEP_CALLBACK_ID, waitJobStep } from './wait-job-step.js';

/**
 * The app's Workflow Builder steps (the manifest's `functions`). Bolt acknowledges each
 * `function_executed` event itself; over HTTP the answer still waits for the listener, which
 * records the step first.
 */
export function registerFunctions(app: App, deps: ListenerDeps): void {
  app.function(START_STEP_CALLBACK_ID, startJobStep(deps));
  app.function(WAIT_STEP_CALLBACK_ID, waitJobStep(deps));
}
