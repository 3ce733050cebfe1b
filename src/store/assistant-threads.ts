import type { Params } from './queries/named.js';
import type { QueryName } from './queries.js';
import { parseAssistantThread, type Row } from './rows.js';
import type { Store } from './types.js';

/**
 * The thread ts under which the context of a whole conversation is recorded: agent messaging's
 * Messages tab reports the channel it is beside per conversation (`app_context_changed`), not
 * per thread. No message has this ts.
 */
export const WHOLE_CONVERSATION = '';

type Methods = Pick<Store, 'recordAssistantThread' | 'touchAssistantThread' | 'assistantThread'>;

/**
 * The assistant-thread methods, written once for both engines: each engine passes its own way
 * of running one named statement (synchronous on SQLite, awaited on PostgreSQL).
 */
export function assistantThreadMethods(run: {
  one: <T>(name: QueryName, params: Params, parse: (row: Row) => T) => T | undefined | Promise<T | undefined>;
  write: (name: QueryName, params: Params) => unknown;
}): Methods {
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
