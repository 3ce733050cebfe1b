/** What the message, card and notification tests render with. */
import type { RenderHints } from '../../src/blocks/messages.js';
import type { RunOutcome } from '../../src/store/types.js';

/** Every reply goes to the agent unless it starts with `//`; pull requests on GitHub are linked. */
export const HINTS: RenderHints = { mode: 'all', asideMarker: '//', prLinkHosts: ['github.com'] };

/** Every way a run can end. */
export const RUN_OUTCOMES: RunOutcome[] = [
  'completed_pr',
  'completed_no_changes',
  'failed',
  'archived',
  'gone',
  'stopped_watching',
];
