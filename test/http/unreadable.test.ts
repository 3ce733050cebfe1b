import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { failedFields, logUnreadable } from '../../src/http/unreadable.js';
import { createLogger } from '../../src/logging/logger.js';

const schema = z.object({ user: z.string().min(1), ts: z.string(), thread: z.object({ ts: z.string() }) });

function logged(event: Record<string, unknown>) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
  const parsed = schema.safeParse(event);
  if (parsed.success) throw new Error('expected the event not to parse');
  logUnreadable(logger, 'direct message', event, parsed.error);
  return lines;
}

describe('logUnreadable', () => {
  it('logs one warning naming what the event was and which fields failed, and how', () => {
    const lines = logged({ type: 'message', subtype: 'file_share', user: '', ts: 17, thread: { ts: 1 } });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'warn',
      what: 'direct message',
      type: 'message',
      subtype: 'file_share',
    });
    expect(line.fields).toEqual(['user: too_small', 'ts: invalid_type', 'thread.ts: invalid_type']);
  });

  it('never logs what a person wrote, even in a field that failed', () => {
    const secretWords = 'the launch date is 12 March';
    const lines = logged({ type: 'message', user: secretWords, ts: secretWords, text: secretWords });
    expect(lines.join('\n')).not.toContain('launch date');
  });

  it('leaves out a type or subtype that is not a string', () => {
    const line = JSON.parse(logged({ type: { x: 1 }, subtype: 7, user: 'U0A', ts: '1' })[0] as string);
    expect(line.type).toBeUndefined();
    expect(line.subtype).toBeUndefined();
  });
});

describe('failedFields', () => {
  it('names the payload itself when the whole of it is wrong', () => {
    const parsed = schema.safeParse('not an event');
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(failedFields(parsed.error)).toEqual(['(payload): invalid_type']);
  });
});
