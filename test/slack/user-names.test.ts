import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import type { SlackGateway } from '../../src/slack/gateway.js';
import { createUserNames, MAX_NAMES, NAME_CACHE_MS } from '../../src/slack/user-names.js';

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
