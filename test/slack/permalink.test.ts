import { describe, expect, it } from 'vitest';
import { permalink } from '../../src/slack/permalink.js';

const WORKSPACE = 'https://example-test.slack.com/';

describe('permalink', () => {
  it('links a message from the workspace address, with or without its final slash', () => {
    const link = 'https://example-test.slack.com/archives/C0DOCS/p1700000100000100';
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000100.000100')).toBe(link);
    expect(permalink(WORKSPACE.slice(0, -1), 'C0DOCS', '1700000100.000100')).toBe(link);
  });

  it('names the thread of a reply, and not of a thread’s root', () => {
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000200.000200', '1700000100.000100')).toBe(
      'https://example-test.slack.com/archives/C0DOCS/p1700000200000200?thread_ts=1700000100.000100&cid=C0DOCS',
    );
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000100.000100', '1700000100.000100')).not.toContain(
      'thread_ts',
    );
  });

  it('gives nothing while the workspace address is not known', () => {
    expect(permalink(undefined, 'C0DOCS', '1700000100.000100')).toBeUndefined();
  });
});
