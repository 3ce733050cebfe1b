import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { SlackCallError } from '../../src/slack/caller.js';
import {
  createChannelAudiences,
  createUserNames,
  MAX_NAMES,
  NAME_CACHE_MS,
} from '../../src/slack/directory.js';
import type { SlackGateway } from '../../src/slack/gateway.js';
import type { ConversationFacts } from '../../src/slack/ids.js';

const facts = (isPrivate: boolean): ConversationFacts => ({
  isMember: true,
  isArchived: false,
  isDirect: false,
  isPrivate,
});

/** A gateway whose conversations.info answers from `answer`, counting the calls. */
function world(answer: (channel: string) => Promise<ConversationFacts>) {
  const clock = { at: 1_700_000_000_000 };
  const logs: string[] = [];
  const calls: string[] = [];
  const audiences = createChannelAudiences({
    slack: {
      conversationFacts: (channel) => {
        calls.push(channel);
        return answer(channel);
      },
    },
    logger: createLogger({ level: 'debug', secrets: [], write: (l) => logs.push(l) }),
    timeoutMs: 50,
    now: () => clock.at,
  });
  return { audiences, calls, logs, clock };
}

describe('who can read a channel', () => {
  it('is Slack’s word, asked once a minute per channel, and once for simultaneous questions', async () => {
    const w = world(async (channel) => facts(channel === 'C0SECRET'));
    expect(await Promise.all([w.audiences.of('C0OPEN'), w.audiences.of('C0OPEN')])).toEqual([
      'public',
      'public',
    ]);
    expect(await w.audiences.of('C0SECRET')).toBe('private');
    expect(await w.audiences.of('C0OPEN')).toBe('public');
    expect(w.calls).toEqual(['C0OPEN', 'C0SECRET']);
    w.clock.at += 60_000;
    await w.audiences.of('C0OPEN');
    expect(w.calls).toEqual(['C0OPEN', 'C0SECRET', 'C0OPEN']);
  });

  it('is unknown (treated as private) when Slack refuses or does not answer in time, and asked again next time', async () => {
    let slow: (() => void) | undefined;
    const w = world((channel) =>
      channel === 'C0SLOW'
        ? new Promise((resolve) => {
            slow = () => resolve(facts(false));
          })
        : Promise.reject(new SlackCallError('conversations.info', 'missing_scope', { platform: true })),
    );
    expect(await w.audiences.of('C0GROUP')).toBe('unknown');
    expect(await w.audiences.of('C0SLOW')).toBe('unknown');
    expect(w.logs.filter((l) => l.includes('treated as private'))).toHaveLength(2);
    expect(await w.audiences.of('C0GROUP')).toBe('unknown');
    expect(w.calls.filter((c) => c === 'C0GROUP')).toHaveLength(2);
    // A late answer serves the next question, without asking again.
    slow?.();
    expect(await w.audiences.of('C0SLOW')).toBe('public');
    expect(await w.audiences.of('C0SLOW')).toBe('public');
    expect(w.calls.filter((c) => c === 'C0SLOW')).toHaveLength(1);
  });
});

function gateway() {
  const calls: string[] = [];
  const slack = {
    async userInfo(id: string) {
      calls.push(id);
      return {
        name: `name of ${id}`,
        isRestricted: false,
        isUltraRestricted: false,
        isBot: false,
        deleted: false,
      };
    },
  } as unknown as SlackGateway;
  return { slack, calls };
}

const logger = createLogger({ level: 'error', secrets: [], write: () => {} });

describe('user names', () => {
  it('looks each name up once while it is fresh, again once it is stale', async () => {
    let now = 0;
    const { slack, calls } = gateway();
    const names = createUserNames(slack, logger, () => now);
    expect(await names.of(['U1', 'U2', 'U1'])).toEqual(
      new Map([
        ['U1', 'name of U1'],
        ['U2', 'name of U2'],
      ]),
    );
    await names.of(['U1', 'U2']);
    expect(calls).toEqual(['U1', 'U2']);
    now = NAME_CACHE_MS;
    await names.of(['U1']);
    expect(calls).toEqual(['U1', 'U2', 'U1']);
  });

  it(`keeps at most ${MAX_NAMES} names under many distinct people`, async () => {
    const { slack, calls } = gateway();
    const names = createUserNames(slack, logger);
    const people = 3 * MAX_NAMES;
    for (let i = 0; i < people; i += 25) {
      await names.of(Array.from({ length: 25 }, (_, k) => `U${i + k}`));
    }
    expect(calls).toHaveLength(people);
    // The most recent MAX_NAMES are cached; the first ones were forgotten and are asked for again.
    await names.of([`U${people - 1}`, `U${people - MAX_NAMES}`]);
    expect(calls).toHaveLength(people);
    await names.of(['U0']);
    expect(calls).toHaveLength(people + 1);
  });
});
