import { describe, expect, it } from 'vitest';
import { createHealth } from '../../src/http/health.js';

describe('createHealth', () => {
  it('remembers when the agent API last answered with success, and only then', () => {
    let now = 1_000;
    const health = createHealth(() => now);
    expect(health.startedAt).toBe(1_000);
    expect(health.lastAgentSuccessAt()).toBeUndefined();
    now = 2_000;
    health.agentAnswered(200);
    now = 3_000;
    for (const status of [199, 300, 429, 500]) health.agentAnswered(status);
    expect(health.lastAgentSuccessAt()).toBe(2_000);
    now = 4_000;
    health.agentAnswered(299);
    expect(health.lastAgentSuccessAt()).toBe(4_000);
  });

  it('says whether the poller runs', () => {
    const health = createHealth(() => 0);
    expect(health.pollerRunning()).toBe(false);
    health.setPollerRunning(true);
    expect(health.pollerRunning()).toBe(true);
    health.setPollerRunning(false);
    expect(health.pollerRunning()).toBe(false);
  });
});
