import type { App } from '@slack/bolt';
import { FEEDBACK_ACTION_ID } from '../blocks/feedback.js';
import { RETRY_ACTION_ID } from '../blocks/status-card.js';
import { appContextChanged } from '../features/agent-messaging/app-context-changed.js';
import { assistantPane, screenAssistantEvents } from '../features/agent-messaging/assistant-pane.js';
import { appHomeOpened } from '../features/app-home/listener.js';
import { messageDeleted, messageEdited } from '../features/edits/listener.js';
import { outcomeFeedback } from '../features/feedback/listener.js';
import { appMention } from '../features/messages/app-mention.js';
import { directMessage } from '../features/messages/direct-message.js';
import { threadReply } from '../features/messages/thread-reply.js';
import { agentSessionStopped } from '../features/stop/listener.js';
import { tryAgain } from '../features/try-again/listener.js';
import { registerActions } from './actions/index.js';
import { registerCommands } from './commands/index.js';
import { registerFunctions } from './functions/index.js';
import { learnInstallation } from './installation.js';
import { registerShortcuts } from './shortcuts/index.js';
import type { ListenerDeps } from './types.js';
import { registerViews } from './views/index.js';

/**
 * Registers every Slack surface the app answers: the one table of listeners, and the only module
 * outside `src/features` that imports a feature (the architecture test checks this).
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  // The features (src/features/) are each handed the fields of these dependencies they declare.
  app.use(learnInstallation(deps.identity));
  // The assistant pane, screened first: Bolt's `Assistant` throws on a thread it cannot read,
  // which would answer Slack 500. Bolt hands it every threaded direct message, so its messages
  // listener is the messages feature's direct-message listener.
  app.use(screenAssistantEvents(deps));
  app.assistant(assistantPane(deps, directMessage(deps)));
  registerCommands(app, deps);
  app.event('message', threadReply(deps));
  // Messages at the top of a direct message; threaded ones reach the assistant pane's listener.
  app.event('message', directMessage(deps));
  app.event('message', messageEdited(deps));
  app.event('message', messageDeleted(deps));
  app.event('app_mention', appMention(deps));
  app.event('app_home_opened', appHomeOpened(deps));
  // Agent messaging's Messages tab; the assistant pane's own events reach the pane above.
  app.event('app_context_changed', appContextChanged(deps));
  registerShortcuts(app, deps);
  registerViews(app, deps);
  registerActions(app, deps);
  registerFunctions(app, deps);
  app.action(FEEDBACK_ACTION_ID, outcomeFeedback(deps));
  app.event('agent_session_stopped', agentSessionStopped(deps));
  app.action(RETRY_ACTION_ID, tryAgain(deps));
}
