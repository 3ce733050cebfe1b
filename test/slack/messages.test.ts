import { describe, expect, it } from 'vitest';
import { isHumanMessage } from '../../src/slack/messages.js';

describe('whether a message is a person’s own', () => {
  it('takes plain messages, "Also send to channel" replies and files with a comment', () => {
    expect(isHumanMessage({})).toBe(true);
    expect(isHumanMessage({ subtype: undefined })).toBe(true);
    expect(isHumanMessage({ subtype: 'thread_broadcast' })).toBe(true);
    expect(isHumanMessage({ subtype: 'file_share' })).toBe(true);
  });

  it('refuses edits, deletions, joins, topic changes and bot messages', () => {
    for (const subtype of [
      'message_changed',
      'message_deleted',
      'message_replied',
      'channel_join',
      'channel_leave',
      'channel_topic',
      'bot_message',
      'me_message',
      'assistant_app_thread',
    ])
      expect(isHumanMessage({ subtype }), subtype).toBe(false);
  });

  it('refuses subtypes it does not know, and ones that are not text', () => {
    for (const subtype of ['', 'File_Share', 'thread_broadcast ', null, 0, false, ['file_share']])
      expect(isHumanMessage({ subtype }), JSON.stringify(subtype)).toBe(false);
  });
});
