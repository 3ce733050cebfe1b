import { parseAssistantThread } from './rows.js';
import type { Statements } from './statements.js';
import type { Store } from './types.js';

/**
 * The thread ts under which the context of a whole conversation is recorded: agent messaging's
 * Messages tab reports the channel it is beside per conversation (`app_context_changed`), not
 * per thread. No message has this ts.
 */
export const WHOLE_CONVERSATION = '';

type Methods = Pick<Store, 'recordAssistantThread' | 'touchAssistantThread' | 'assistantThread'>;

/** The assistant-thread methods, written once for both engines over their {@link Statements}. */
export function assistantThreadMethods(run: Pick<Statements, 'one' | 'write'>): Methods {
  return {
    async recordAssistantThread(thread, at) {
      await run.write('recordAssistantThread', { ...thread, at });
    },
    async touchAssistantThread(thread, at) {
      await run.write('touchAssistantThread', { ...thread, at });
    },
    assistantThread: async (channelId, threadTs) =>
      run.one('assistantThread', { channelId, threadTs }, parseAssistantThread),
  };
}
