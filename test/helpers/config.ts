import { ConfigError, readConfig } from '../../src/config/config.js';

/** The smallest environment that starts the app in HTTP mode. */
export const VALID_ENV = {
  SLACK_BOT_TOKEN: 'xoxb-test',
  SLACK_SIGNING_SECRET: 'test-secret',
  DOCS_AGENT_API_KEY: 'mint_test',
  DOCS_AGENT_PROJECT_ID: 'proj_test',
};

/** The problems a ConfigError names for `env`; fails when the environment is valid. */
export function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    readConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
