import type { App } from '@slack/bolt';
import { MODAL_CALLBACK_ID } from '../../blocks/send-modal.js';
import type { ListenerDeps } from '../types.js';
import { sendToDocsAgentSubmission } from './send-to-docs-agent-submission.js';

export function registerViews(app: App, deps: ListenerDeps): void {
  app.view(MODAL_CALLBACK_ID, sendToDocsAgentSubmission(deps));
}
