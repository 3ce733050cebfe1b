import { describe, expect, it } from 'vitest';
import { databasePassword, secretsOfEnv } from '../../src/logging/secrets.js';
import { AWKWARD } from '../helpers/secrets.js';

describe("a database URL's password", () => {
  it('finds a database password as written, as a URL parser writes it, and decoded', () => {
    const encoded = encodeURIComponent(AWKWARD.dbPassword);
    expect(databasePassword(`postgres://bot:${encoded}@db/x`)).toEqual(
      expect.arrayContaining([encoded, AWKWARD.dbPassword]),
    );
    // Written without encoding, as people do: still found, even where a URL parser gives up.
    expect(databasePassword('postgres://bot:50%off "pw"@db/x')).toEqual(
      expect.arrayContaining(['50%off "pw"']),
    );
    expect(databasePassword('postgres://bot:p@ss/w#rd@db/x')).toEqual(expect.arrayContaining(['p@ss/w#rd']));
    expect(databasePassword('postgres://bot@db:5432/x?options=a:b@c')).toEqual([]);
  });

  it('finds a database password given as a query parameter, which the driver also accepts', () => {
    const encoded = encodeURIComponent(AWKWARD.dbPassword);
    expect(databasePassword(`postgres://bot@db/x?sslmode=require&password=${encoded}`)).toEqual(
      expect.arrayContaining([encoded, AWKWARD.dbPassword]),
    );
    // Not parseable as a URL: the parameter as written is still found.
    expect(databasePassword('postgres://bot@db:x/y?password=q%zz-fake-pw&a=b')).toEqual(
      expect.arrayContaining(['q%zz-fake-pw']),
    );
  });

  it('is nothing for no URL, a URL without a password, or an empty one', () => {
    expect(databasePassword(undefined)).toEqual([]);
    expect(databasePassword('')).toEqual([]);
    expect(databasePassword('postgres://db.example.com/docs')).toEqual([]);
    expect(databasePassword('postgres://bot@db.example.com/docs')).toEqual([]);
    expect(databasePassword('postgres://bot:@db.example.com/docs')).toEqual([]);
    expect(databasePassword('postgres://bot@db/x?password=&sslmode=require')).toEqual([]);
  });

  it('lists each form once, and decodes the valid escapes of a password whose stray % breaks decoding', () => {
    expect(databasePassword('postgres://bot:plain-fake-pw@db/x')).toEqual(['plain-fake-pw']);
    // "%zz" is no escape, so whole-string decoding throws; "%2F" still reads as "/".
    expect(databasePassword('postgres://bot@db/x?password=a%2Fb%zz-fake')).toEqual(
      expect.arrayContaining(['a%2Fb%zz-fake', 'a/b%zz-fake']),
    );
    const found = databasePassword('postgres://bot:same-fake-pw@db/x?password=same-fake-pw');
    expect(found).toEqual(['same-fake-pw']);
  });
});

describe('the secrets of an environment', () => {
  it('reads every secret of an environment that is not a valid configuration', () => {
    const secrets = secretsOfEnv({
      SLACK_BOT_TOKEN: AWKWARD.botToken,
      SLACK_SIGNING_SECRET: AWKWARD.signingSecret,
      SLACK_APP_TOKEN: AWKWARD.appToken,
      DOCS_AGENT_API_KEY: AWKWARD.apiKey,
      DATABASE_URL: `postgres://bot:${encodeURIComponent(AWKWARD.dbPassword)}@db/x?sslmode=bogus`,
      PORT: 'not a port',
    });
    expect(secrets).toEqual(expect.arrayContaining(Object.values(AWKWARD)));
  });

  it('takes the metrics token and a value as padded and trimmed, and skips blanks and ordinary settings', () => {
    const secrets = secretsOfEnv({
      METRICS_TOKEN: '  metrics-fake-token\n',
      SLACK_BOT_TOKEN: '',
      SLACK_SIGNING_SECRET: undefined,
      DATABASE_URL: '  postgres://bot:trimmed-fake-pw@db/x  ',
      PORT: '3000',
      DOCS_AGENT_PROJECT_ID: 'proj-not-secret',
    });
    expect(secrets).toEqual(
      expect.arrayContaining(['  metrics-fake-token\n', 'metrics-fake-token', 'trimmed-fake-pw']),
    );
    expect(secrets).not.toContain('');
    expect(secrets).not.toContain('3000');
    expect(secrets).not.toContain('proj-not-secret');
  });
});
