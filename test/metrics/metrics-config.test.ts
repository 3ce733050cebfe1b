import { describe, expect, it } from 'vitest';
import { readConfig, secretsOf } from '../../src/config/config.js';
import { secretsOfEnv } from '../../src/logging/logger.js';
import { problemsOf, VALID_ENV } from '../helpers/config.js';

const valid = VALID_ENV;

describe('METRICS_TOKEN', () => {
  it('is off by default and when blank', () => {
    expect(readConfig(valid).metricsToken).toBeUndefined();
    expect(readConfig({ ...valid, METRICS_TOKEN: '  ' }).metricsToken).toBeUndefined();
  });

  it('is read as given, and is a secret for the logs, also when the environment does not parse', () => {
    const token = 'metrics-test-token-0000';
    const config = readConfig({ ...valid, METRICS_TOKEN: token });
    expect(config.metricsToken).toBe(token);
    expect(secretsOf(config)).toContain(token);
    expect(secretsOfEnv({ METRICS_TOKEN: token })).toContain(token);
  });

  it('refuses a short token or one a header cannot carry, naming the variable and never the value', () => {
    // 15 characters; a space; a character outside the token alphabet.
    for (const bad of ['short-token-001', 'metrics test token 0000', 'metrics-test-token-0000\u00e9']) {
      const env = { ...valid, METRICS_TOKEN: bad };
      const problems = problemsOf(env);
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.every((p) => p.startsWith('METRICS_TOKEN '))).toBe(true);
      expect(problems.join('\n')).not.toContain(env.METRICS_TOKEN);
    }
    expect(problemsOf({ ...valid, METRICS_TOKEN: 'x'.repeat(513) })).toEqual([
      'METRICS_TOKEN must be at most 512 characters',
    ]);
    expect(readConfig({ ...valid, METRICS_TOKEN: 'a'.repeat(16) }).metricsToken).toHaveLength(16);
  });
});
