import { verifySlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { signature } from '../helpers/signing.js';

// Slack's documented example ("Verifying requests from Slack"), quoted in DESIGN.md section 2.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = 1531420618;
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const EXPECTED = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

describe("Slack's documented signature example", () => {
  it('is what the test signer produces', () => {
    expect(signature(SECRET, TIMESTAMP, BODY)).toBe(EXPECTED);
  });

  it('is accepted by the verifier the app runs, at the time it was made', () => {
    expect(() =>
      verifySlackRequest({
        signingSecret: SECRET,
        body: BODY,
        headers: { 'x-slack-signature': EXPECTED, 'x-slack-request-timestamp': TIMESTAMP },
        nowMilliseconds: TIMESTAMP * 1000 + 1_000,
      }),
    ).not.toThrow();
  });

  it('is refused when one byte of the body changes, or when it is over 5 minutes old', () => {
    const headers = { 'x-slack-signature': EXPECTED, 'x-slack-request-timestamp': TIMESTAMP };
    expect(() =>
      verifySlackRequest({
        signingSecret: SECRET,
        body: BODY.replace('roadrunner', 'roadrunnes'),
        headers,
        nowMilliseconds: TIMESTAMP * 1000,
      }),
    ).toThrow();
    expect(() =>
      verifySlackRequest({
        signingSecret: SECRET,
        body: BODY,
        headers,
        nowMilliseconds: (TIMESTAMP + 6 * 60) * 1000,
      }),
    ).toThrow();
  });
});
