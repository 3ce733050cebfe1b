import type { AnyMiddlewareArgs, App, Middleware } from '@slack/bolt';
import { RETRY_ACTION_ID } from '../blocks/status-card.js';
import { appContextChanged } from '../features/agent-messaging/app-context-changed.js';
import { assistantPane, screenAssistantEvents } from '../features/agent-messaging/assistant-pane.js';
import { appHomeOpened } from '../features/app-home/listener.js';
import { docsAgentCommand } from '../features/command/listener.js';
import { messageDeleted, messageEdited } from '../features/edits/listener.js';
import { FEEDBACK_ACTION_ID, WHAT_TO_FIX_ACTION_ID } from '../features/feedback/buttons.js';
import { outcomeFeedback } from '../features/feedback/listener.js';
import {
  openWhatToFix,
  WHAT_TO_FIX_CALLBACK_ID,
  whatToFixSubmission,
} from '../features/feedback/what-to-fix.js';
import { appMention } from '../features/messages/app-mention.js';
import { directMessage } from '../features/messages/direct-message.js';
import { threadReply } from '../features/messages/thread-reply.js';
import { sendToDocsAgent } from '../features/shortcut/listener.js';
import { MODAL_CALLBACK_ID, SHORTCUT_CALLBACK_ID } from '../features/shortcut/modal.js';
import { sendToDocsAgentSubmission } from '../features/shortcut/submission.js';
import { agentSessionStopped } from '../features/stop/listener.js';
import { tryAgain } from '../features/try-again/listener.js';
import {
  START_STEP_CALLBACK_ID,
  startJobStep,
  WAIT_STEP_CALLBACK_ID,
  waitJobStep,
} from '../features/workflow-steps/listener.js';
import { type Identity, installationOfId } from '../slack/identity.js';
import type { ListenerDeps } from './types.js';

/**
 * Registers every Slack surface the app answers: the one table of listeners. Outside
 * `src/features`, only it and the composition root import a feature (the architecture test
 * checks this).
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  // The features (src/features/) are each handed the fields of these dependencies they declare.
  app.use(learnInstallation(deps.identity));
  // The assistant pane, screened first: Bolt's `Assistant` throws on a thread it cannot read,
  // which would answer Slack 500. Bolt hands it every threaded direct message, so its messages
  // listener is the messages feature's direct-message listener.
  app.use(screenAssistantEvents(deps));
  app.assistant(assistantPane(deps, directMessage(deps)));
  // The app owns one command; matching any name keeps it working if a workspace renames it.
  app.command(/^\/.+/, docsAgentCommand(deps));
  app.event('message', threadReply(deps));
  // Messages at the top of a direct message; threaded ones reach the assistant pane's listener.
  app.event('message', directMessage(deps));
  app.event('message', messageEdited(deps));
  app.event('message', messageDeleted(deps));
  app.event('app_mention', appMention(deps));
  app.event('app_home_opened', appHomeOpened(deps));
  // Agent messaging's Messages tab; the assistant pane's own events reach the pane above.
  app.event('app_context_changed', appContextChanged(deps));
  // The message shortcut opens its modal; the modal's submission starts the job.
  app.shortcut(SHORTCUT_CALLBACK_ID, sendToDocsAgent(deps));
  app.view(MODAL_CALLBACK_ID, sendToDocsAgentSubmission(deps));
  // "View pull request" opens its URL in the browser; Slack still sends the click, and an
  // unacknowledged click shows the person a warning.
  app.action('view_pull_request', ({ ack }) => ack());
  // The Workflow Builder steps (the manifest's `functions`). Bolt acknowledges each
  // `function_executed` event itself; over HTTP the answer still waits for the listener, which
  // records the step first.
  app.function(START_STEP_CALLBACK_ID, startJobStep(deps));
  app.function(WAIT_STEP_CALLBACK_ID, waitJobStep(deps));
  app.action(FEEDBACK_ACTION_ID, outcomeFeedback(deps));
  // A thumbs-down's private answer offers a modal; what it says goes to the job as a follow-up.
  app.action(WHAT_TO_FIX_ACTION_ID, openWhatToFix(deps));
  app.view(WHAT_TO_FIX_CALLBACK_ID, whatToFixSubmission(deps));
  app.event('agent_session_stopped', agentSessionStopped(deps));
  app.action(RETRY_ACTION_ID, tryAgain(deps));
}

interface BotAuthorization {
  team_id?: unknown;
  enterprise_id?: unknown;
  is_bot?: unknown;
  is_enterprise_install?: unknown;
}

/**
 * The installation an Events API request was delivered for, by its bot authorization: the
 * workspace's id, or the organisation's (`enterprise_id`, with `team_id: null`) for an
 * organisation-wide install.
 */
export function installationIdOf(body: unknown): string | undefined {
  const auths = (body as { authorizations?: BotAuthorization[] }).authorizations;
  const bot = Array.isArray(auths) ? auths.find((a) => a?.is_bot === true) : undefined;
  if (!bot) return undefined;
  const id = bot.is_enterprise_install === true ? bot.enterprise_id : bot.team_id;
  return typeof id === 'string' && installationOfId(id) ? id : undefined;
}

/**
 * Runs before every listener: learns the installation from the signed request itself, so an
 * author from another organisation is recognised even while auth.test cannot answer.
 */
export function learnInstallation(
  identity: Pick<Identity, 'noteInstallation'>,
): Middleware<AnyMiddlewareArgs> {
  return async ({ body, next }) => {
    const id = installationIdOf(body);
    if (id) identity.noteInstallation(id);
    await next();
  };
}
