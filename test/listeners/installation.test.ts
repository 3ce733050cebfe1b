import { describe, expect, it, vi } from 'vitest';
import { installationIdOf, learnInstallation } from '../../src/listeners/installation.js';

type Args = Parameters<ReturnType<typeof learnInstallation>>[0];

/** Runs the middleware on `body` as Bolt would; returns what it noted and whether it went on. */
async function run(body: unknown) {
  const identity = { noteInstallation: vi.fn() };
  const next = vi.fn(async () => {});
  await learnInstallation(identity)({ body, next, context: {}, logger: {}, client: {} } as unknown as Args);
  return { noted: identity.noteInstallation.mock.calls.map((c) => c[0]), next };
}

const auth = (fields: Record<string, unknown>) => ({
  authorizations: [{ is_bot: true, team_id: 'T0TEST', ...fields }],
});

describe('learnInstallation', () => {
  it('notes the workspace of the request’s bot authorization, then runs the listener', async () => {
    const { noted, next } = await run({ team_id: 'T0AUTHOR', ...auth({}) });
    expect(noted).toEqual(['T0TEST']);
    expect(next).toHaveBeenCalledOnce();
  });

  it('takes an Enterprise Grid organisation id too', async () => {
    expect(installationIdOf(auth({ team_id: 'E0GRID' }))).toBe('E0GRID');
  });

  it('notes the organisation of an organisation-wide install, whose authorization names no workspace', async () => {
    // As Slack's organisation-wide apps reference shows an event's authorizations.
    const { noted } = await run({
      team_id: 'T0ACMEDOCS',
      enterprise_id: 'E0ACME',
      authorizations: [
        {
          enterprise_id: 'E0ACME',
          team_id: null,
          user_id: 'W0BOT',
          is_bot: true,
          is_enterprise_install: true,
        },
      ],
    });
    expect(noted).toEqual(['E0ACME']);
  });

  it('notes the workspace of a single-workspace install in a Grid organisation', async () => {
    const { noted } = await run(
      auth({ team_id: 'T0ACMEDOCS', enterprise_id: 'E0ACME', is_enterprise_install: false }),
    );
    expect(noted).toEqual(['T0ACMEDOCS']);
  });

  it.each([
    ['no authorizations (a command or an interaction)', { team_id: 'T0TEST' }],
    ['only a user’s authorization', { authorizations: [{ is_bot: false, team_id: 'T0TEST' }] }],
    ['a team id that is not one', auth({ team_id: 'not-a-team' })],
    [
      'an organisation-wide authorization without an organisation',
      auth({ team_id: null, enterprise_id: null, is_enterprise_install: true }),
    ],
    ['a team id that is not a string', auth({ team_id: 42 })],
    ['authorizations that are not a list', { authorizations: { is_bot: true, team_id: 'T0TEST' } }],
    ['a malformed entry', { authorizations: [null] }],
  ])('notes nothing for %s, and still runs the listener', async (_what, body) => {
    const { noted, next } = await run(body);
    expect(noted).toEqual([]);
    expect(next).toHaveBeenCalledOnce();
  });
});
