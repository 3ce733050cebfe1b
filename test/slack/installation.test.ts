import { describe, expect, it } from 'vitest';
import { installationOfAuthTest, installationOfId } from '../../src/slack/installation.js';

const ORG = { kind: 'organization', enterpriseId: 'E0ACME' };

describe('the installation an id names', () => {
  it('is a workspace for a T… id and an organisation for an E… id', () => {
    expect(installationOfId('T0TEST')).toEqual({ kind: 'workspace', teamId: 'T0TEST' });
    expect(installationOfId('E0ACME')).toEqual(ORG);
  });

  it('is none for anything else', () => {
    for (const id of ['U0ALICE', 'W0BOT', 'C0DOCS', 't0test', 'T', 'T0 TEST', '', null, 42, undefined])
      expect(installationOfId(id), String(id)).toBeUndefined();
  });
});

describe('the installation auth.test describes', () => {
  it('is the workspace of a workspace token', () => {
    expect(installationOfAuthTest({ team_id: 'T0TEST' })).toEqual({ kind: 'workspace', teamId: 'T0TEST' });
  });

  it('is only the workspace of a token installed in one workspace of a Grid organisation', () => {
    expect(
      installationOfAuthTest({
        team_id: 'T0ACMEDOCS',
        enterprise_id: 'E0ACME',
        is_enterprise_install: false,
      }),
    ).toEqual({ kind: 'workspace', teamId: 'T0ACMEDOCS' });
  });

  it.each([
    ['no team_id', {}],
    ['an empty team_id', { team_id: '' }],
    ['the organisation’s id as team_id', { team_id: 'E0ACME' }],
    ['a workspace’s id as team_id', { team_id: 'T0ACMEDOCS' }],
  ])('is the organisation of an organisation-wide token, with %s', (_what, team) => {
    expect(installationOfAuthTest({ ...team, enterprise_id: 'E0ACME', is_enterprise_install: true })).toEqual(
      ORG,
    );
  });

  it('is none when it names neither a workspace nor an organisation', () => {
    expect(installationOfAuthTest({})).toBeUndefined();
    expect(installationOfAuthTest({ team_id: '' })).toBeUndefined();
    expect(installationOfAuthTest({ is_enterprise_install: true, team_id: 'T0ACMEDOCS' })).toBeUndefined();
    expect(
      installationOfAuthTest({ is_enterprise_install: true, enterprise_id: 'not-an-org' }),
    ).toBeUndefined();
  });
});
