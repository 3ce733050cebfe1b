import { describe, expect, it } from 'vitest';
import { createLogger, createRedactor } from '../src/logger.js';

describe('logger', () => {
  it('masks configured secrets and anything shaped like a token, at every level', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: ['s3cr3t-value'], write: (l) => lines.push(l) });
    const error = new Error('auth failed for xoxb-12-abc and mint_abcdef', {
      cause: new Error('s3cr3t-value leaked'),
    });
    logger.debug('d', { token: 'xoxb-test-1' });
    logger.info('i', { header: 'Bearer mint_test' });
    logger.warn('w', { error });
    logger.error('e s3cr3t-value', { nested: { app: 'xapp-1-A1-xyz' } });
    expect(lines).toHaveLength(4);
    const all = lines.join('\n');
    for (const secret of [
      's3cr3t-value',
      'xoxb-12-abc',
      'mint_abcdef',
      'xoxb-test-1',
      'mint_test',
      'xapp-1-A1-xyz',
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('[redacted]');
    expect(JSON.parse(lines[2] as string).error.cause.message).toBe('[redacted] leaked');
  });

  it('drops lines below the level', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', secrets: [], write: (l) => lines.push(l) });
    logger.debug('no');
    logger.info('no');
    logger.warn('yes');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['yes']);
  });

  it('redactor leaves ordinary text alone', () => {
    expect(createRedactor(['abcd'])('nothing secret here')).toBe('nothing secret here');
  });
});
