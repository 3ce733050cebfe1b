import type { App } from '@slack/bolt';
import { FEEDBACK_ACTION_ID } from '../blocks/feedback.js';
import { RETRY_ACTION_ID } from '../blocks/status-card.js';
import { docsAgentCommand } from '../features/command/listener.js';
import { outcomeFeedback } from '../features/feedback/listener.js';
import { sendToDocsAgent } from '../features/shortcut/listener.js';
import { MODAL_CALLBACK_ID, SHORTCUT_CALLBACK_ID } from '../features/shortcut/modal.js';
import { sendToDocsAgentSubmission } from '../features/shortcut/submission.js';
import { agentSessionStopped } from '../features/stop/listener.js';
import { tryAgain } from '../features/try-again/listener.js';
import { registerActions } from './actions/index.js';
import { registerAssistant } from './assistant/index.js';
import { registerEvents } from './events/index.js';
import { registerFunctions } from './functions/index.js';
import { learnInstallation } from './installation.js';
import type { ListenerDeps } from './types.js';

/**
 * Registers every Slack surface the app answers: the one table of listeners, and the only module
 * outside `src/features` that imports a feature (the architecture test checks this).
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  app.use(learnInstallation(deps.identity));
  registerAssistant(app, deps);
  registerEvents(app, deps);
  registerActions(app, deps);
  registerFunctions(app, deps);
  // The features (src/features/), each handed the fields of these dependencies it declares.
  app.action(FEEDBACK_ACTION_ID, outcomeFeedback(deps));
  app.event('agent_session_stopped', agentSessionStopped(deps));
  app.action(RETRY_ACTION_ID, tryAgain(deps));
  // The app owns one command; matching any name keeps it working if a workspace renames it.
  app.command(/^\/.+/, docsAgentCommand(deps));
  // The message shortcut opens its modal; the modal's submission starts the job.
  app.shortcut(SHORTCUT_CALLBACK_ID, sendToDocsAgent(deps));
  app.view(MODAL_CALLBACK_ID, sendToDocsAgentSubmission(deps));
}

/**
 * Every way to use the bot, as `/docs-agent help` says it: the App Home shows it too, and is
 * built before the listeners are registered, so the composition root reads it from this table.
 */
export { usage as guide } from '../features/command/wording.js';
