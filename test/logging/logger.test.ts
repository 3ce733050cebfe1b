import { describe, expect, it } from 'vitest';
import {
  createLogger,
  createRedactor,
  databasePassword,
  redactDeep,
  secretForms,
  secretsOfEnv,
} from '../../src/logging/logger.js';
import { escapeMrkdwn } from '../../src/slack/mrkdwn.js';
import { AWKWARD, leaks } from '../helpers/secrets.js';

describe('logger', () => {
  it('masks configured secrets and anything shaped like a token, at every level', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: ['s3cr3t-value'], write: (l) => lines.push(l) });
    const error = new Error('auth failed for xoxb-12-34-fakeBotToken and mint_fake0key0000000000000', {
      cause: new Error('s3cr3t-value leaked'),
    });
    logger.debug('d', { token: 'xoxp-1-2-3-fakeuser' });
    logger.info('i', { header: 'Bearer mint_FAKE00000000000000000' });
    logger.warn('w', { error });
    logger.error('e s3cr3t-value', { nested: { app: 'xapp-1-A1-xyz' } });
    expect(lines).toHaveLength(4);
    const all = lines.join('\n');
    for (const secret of [
      's3cr3t-value',
      'xoxb-12-34-fakeBotToken',
      'mint_fake0key0000000000000',
      'xoxp-1-2-3-fakeuser',
      'mint_FAKE00000000000000000',
      'xapp-1-A1-xyz',
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('[redacted]');
    expect(JSON.parse(lines[2] as string).error.cause.message).toBe('[redacted] leaked');
  });

  it("masks a Workflow Builder step's token, which no configuration names", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: [], write: (l) => lines.push(l) });
    logger.warn('step', { event: { bot_access_token: 'xwfp-1234567890-0000-fakeStepToken' } });
    expect(lines.join('\n')).not.toContain('fakeStepToken');
    expect(lines.join('\n')).toContain('[redacted]');
  });

  it('leaves words and names that merely look like a token, and masks a token after an encoded "="', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: [], write: (l) => lines.push(l) });
    const words =
      'peppermint_tea, rename the mint_config key, github.com/acme/mint_docs/pull/5, ' +
      'github.com/acme/xoxo-docs/pull/5, the xoxb-style format, toxoxb-1-2-not';
    logger.info(`${words} | key%3Dmint_0fake0000000000000000 or 9xapp-1-A1-xyz`);
    const { msg } = JSON.parse(lines[0] as string) as { msg: string };
    expect(msg).toBe(`${words} | key%3D[redacted] or 9[redacted]`);
  });

  it('masks GitHub tokens no configuration names, and leaves words that merely start like one', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: [], write: (l) => lines.push(l) });
    const classic = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    const fineGrained = `github_pat_11ABCDEFG0${'x'.repeat(40)}`;
    logger.warn(`refused ${classic} and ${fineGrained}; see the ghp_ prefix, github_pat_ docs, sigh_p`);
    const { msg } = JSON.parse(lines[0] as string) as { msg: string };
    expect(msg).toBe('refused [redacted] and [redacted]; see the ghp_ prefix, github_pat_ docs, sigh_p');
  });

  it('masks GITHUB_TOKEN by value, and reads it from an environment that does not parse', () => {
    const token = 'ghe0token0not0shaped0like0github0s';
    const lines: string[] = [];
    createLogger({
      level: 'info',
      secrets: secretsOfEnv({ GITHUB_TOKEN: token }),
      write: (l) => lines.push(l),
    }).info(`token ${token}`);
    expect(lines.join('\n')).not.toContain(token);
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

  it('masks secrets with quotes, backslashes, %, + and spaces, however a line carries them', () => {
    const lines: string[] = [];
    const secrets = Object.values(AWKWARD);
    const logger = createLogger({ level: 'debug', secrets, write: (l) => lines.push(l) });
    for (const secret of secrets) {
      logger.info(`plain ${secret}`, { field: secret, nested: { list: [`x${secret}y`] } });
      logger.warn('an error', { error: new Error(`failed: ${secret}`, { cause: new Error(secret) }) });
      // What libraries hand over: a body already serialised, or serialised twice.
      logger.debug(`body ${JSON.stringify({ password: secret })}`);
      logger.debug('quoted', { line: JSON.stringify(JSON.stringify({ token: secret })) });
      logger.debug(`query ?t=${encodeURIComponent(secret)}&f=${new URLSearchParams({ s: secret })}`);
      logger.debug(`url postgres://u:${encodeURIComponent(secret).toLowerCase()}@db/x`);
      logger.debug(`basic ${Buffer.from(secret).toString('base64')}`);
      logger.child({ bound: secret }).error('bound field', { [secret]: 'as a key' });
    }
    expect(lines).toHaveLength(secrets.length * 8);
    expect(leaks(lines, AWKWARD)).toEqual([]);
    expect(lines.join('\n')).not.toContain(Buffer.from(AWKWARD.dbPassword).toString('base64'));
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'plain [redacted]', field: '[redacted]' });
  });

  it('writes ordinary text with quotes and backslashes unchanged', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: ['db "pa\\ss'], write: (l) => lines.push(l) });
    logger.info('a "quoted" \\ path', { path: 'C:\\temp\\"x"' });
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      msg: 'a "quoted" \\ path',
      path: 'C:\\temp\\"x"',
    });
  });

  it('lists the written forms of a secret, and none shorter than four characters', () => {
    const forms = secretForms('a "b\\c d+e/f%');
    expect(forms).toEqual(
      expect.arrayContaining([
        'a "b\\c d+e/f%',
        'a \\"b\\\\c d+e/f%',
        'a%20%22b%5Cc%20d%2Be%2Ff%25',
        'a+%22b%5Cc+d%2Be%2Ff%25',
        'a%20%22b%5cc%20d%2be%2ff%25',
      ]),
    );
    expect(createRedactor(['abc'])('abc stays')).toBe('abc stays');
  });
});

const SECRET = 'pass<word>&Q7tail';
const redact = createRedactor([SECRET]);

describe('what the bot shows in Slack', () => {
  it('is masked in every string however deep, also as mrkdwn escapes it', () => {
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: `said ${escapeMrkdwn(SECRET)}` } },
      { type: 'context', elements: [{ type: 'plain_text', text: `raw ${SECRET}` }] },
    ];
    const masked = JSON.stringify(redactDeep(blocks, redact));
    expect(masked).not.toContain('Q7tail');
    expect(masked).toContain('said [redacted]');
    expect(masked).toContain('raw [redacted]');
  });

  it('hands back what has nothing to mask as it is, and masks a token that starts a string after a word', () => {
    const clean = { channel: 'C1', blocks: [{ type: 'section', text: { text: 'mint_docs and xoxo-docs' } }] };
    expect(redactDeep(clean, redact)).toBe(clean);
    // Each string is asked on its own line: "abc" before it does not hide the token's start.
    const token = 'xoxb-0000-fakeBotToken';
    const masked = redactDeep({ a: 'abc', b: [token], c: 'ok' }, redact);
    expect(masked).toEqual({ a: 'abc', b: ['[redacted]'], c: 'ok' });
    // A token split over two strings is in neither: nothing is masked, as string by string.
    const split = { a: 'xoxb-0000', b: '-fakeBotToken' };
    expect(redactDeep(split, redact)).toEqual(split);
    // Objects other than plain ones are copied as plain ones, as before.
    expect(redactDeep({ at: new Date(0) }, redact)).toEqual({ at: {} });
  });
});

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
