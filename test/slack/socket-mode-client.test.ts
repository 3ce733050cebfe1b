import { WebAPIHTTPError, WebAPIPlatformError, WebAPIRequestError } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import {
  AppTokenRefusedError,
  clientLogger,
  disconnectReason,
  refusalOf,
} from '../../src/slack/socket-mode-client.js';

describe('Slack’s disconnect message', () => {
  it('is read with its reason, as Slack documents it', () => {
    const message = {
      type: 'disconnect',
      reason: 'refresh_requested',
      debug_info: { host: 'wss-111.slack.com' },
    };
    expect(disconnectReason(JSON.stringify(message), false)).toBe('refresh_requested');
    expect(disconnectReason(JSON.stringify({ ...message, reason: 'warning' }), false)).toBe('warning');
  });

  it('is not confused with any other message', () => {
    const envelope = { envelope_id: 'e1', type: 'events_api', payload: { text: '"disconnect"' } };
    expect(disconnectReason(JSON.stringify(envelope), false)).toBeUndefined();
    expect(disconnectReason(JSON.stringify({ type: 'hello' }), false)).toBeUndefined();
    expect(disconnectReason('{"type":"disconnect"', false)).toBeUndefined();
    expect(disconnectReason('{"type":"disconnect","reason":"warning"}', true)).toBeUndefined();
    expect(disconnectReason(new TextEncoder().encode('{}').buffer, false)).toBeUndefined();
  });
});

describe('a refused app token', () => {
  it.each(['invalid_auth', 'not_authed', 'token_revoked', 'token_expired', 'account_inactive'])(
    '%s from apps.connections.open is a refusal',
    (error) => {
      const refusal = refusalOf(new WebAPIPlatformError({ ok: false, error }));
      expect(refusal).toBeInstanceOf(AppTokenRefusedError);
      expect(refusal?.code).toBe(error);
    },
  );

  it('is told apart from failures a retry can fix', () => {
    expect(refusalOf(new WebAPIPlatformError({ ok: false, error: 'internal_error' }))).toBeUndefined();
    expect(refusalOf(new WebAPIRequestError(new Error('connect ECONNREFUSED')))).toBeUndefined();
    expect(refusalOf(new WebAPIHTTPError(503, 'Service Unavailable', {}))).toBeUndefined();
    expect(refusalOf(undefined)).toBeUndefined();
  });

  it('names SLACK_APP_TOKEN and what to do, and clears the bot token', () => {
    const { message } = new AppTokenRefusedError('invalid_auth');
    expect(message).toContain('Slack refused SLACK_APP_TOKEN (invalid_auth)');
    expect(message).toContain('connections:write');
    expect(message).toContain('The bot token is not at fault');
  });
});

describe('the client’s own lines', () => {
  it('are warnings and errors while the connection is in use, and debug while it is closed on purpose', () => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(JSON.parse(l)) });
    let closing = false;
    const log = clientLogger(logger, 'debug', () => closing);
    log.warn("A pong wasn't received from the server before the timeout of 5000ms!");
    log.error('WebSocket error occurred: socket hang up');
    closing = true;
    log.warn("A pong wasn't received from the server before the timeout of 5000ms!");
    log.error('WebSocket error occurred: socket hang up');
    log.info('still info');
    expect(lines.map((l) => l.level)).toEqual(['warn', 'error', 'debug', 'debug', 'info']);
  });

  it('tell a raw message from Slack by its type and envelope, never by what it holds', () => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(JSON.parse(l)) });
    const log = clientLogger(logger, 'debug', () => false);
    const envelope = {
      envelope_id: 'env-1',
      type: 'events_api',
      payload: {
        event: {
          type: 'function_executed',
          inputs: { user_context: { id: 'U0ALICE', secret: 'c2VjcmV0LW9mLXRoZS1wZXJzb24' } },
          bot_access_token: 'xwfp-test-token',
        },
      },
    };
    log.debug(`Received a message on the WebSocket: ${JSON.stringify(envelope)}`);
    log.debug('Received a message on the WebSocket: not json');
    log.debug('another line');
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringContaining('type events_api, envelope env-1'),
      expect.stringContaining('type unknown, envelope unknown'),
      'another line',
    ]);
    expect(JSON.stringify(lines)).not.toContain('c2VjcmV0');
    expect(JSON.stringify(lines)).not.toContain('U0ALICE');
  });
});
