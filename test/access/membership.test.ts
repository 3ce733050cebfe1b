import { describe, expect, it } from 'vitest';
import { createMembership } from '../../src/access/membership.js';
import type { Installation } from '../../src/slack/identity.js';

const WORKSPACE: Installation = { kind: 'workspace', teamId: 'T1' };
const ORG: Installation = { kind: 'organization', enterpriseId: 'E0ACME' };

/** Membership over a scripted identity: what it knows now, what auth.test would say, the org's list. */
function membership(options: {
  known?: Installation;
  authTest?: Installation;
  workspaces?: string[] | 'unknown';
}) {
  let answered: Installation | undefined;
  let lists = 0;
  const m = createMembership({
    installation: () => answered ?? options.known,
    get: async () => {
      answered = options.authTest;
      return undefined;
    },
    organizationWorkspaces: async () => {
      lists++;
      return options.workspaces === 'unknown' ? undefined : new Set(options.workspaces ?? []);
    },
  });
  return { m, lists: () => lists };
}

describe('the installation', () => {
  it('is what is known, else what auth.test says, else unknown', async () => {
    expect(await membership({ known: ORG, authTest: WORKSPACE }).m.installed()).toEqual(ORG);
    expect(await membership({ authTest: WORKSPACE }).m.installed()).toEqual(WORKSPACE);
    expect(await membership({}).m.installed()).toBeUndefined();
  });
});

describe('a workspace a request names', () => {
  it('is inside a workspace install only when it is that workspace, and outside otherwise', async () => {
    const { m, lists } = membership({});
    expect(await m.teamInside(WORKSPACE, 'T1')).toBe(true);
    expect(m.teamOutside(WORKSPACE, 'T1')).toBe(false);
    expect(await m.teamInside(WORKSPACE, 'T0OTHER')).toBe(false);
    expect(m.teamOutside(WORKSPACE, 'T0OTHER')).toBe(true);
    expect(lists()).toBe(0);
  });

  it('is inside an organisation when listed (or the organisation itself), and never outside on the request’s word alone', async () => {
    const { m } = membership({ workspaces: ['T0ACMEDOCS', 'T0ACMEENG'] });
    expect(await m.teamInside(ORG, 'T0ACMEDOCS')).toBe(true);
    expect(await m.teamInside(ORG, 'T0ACMEENG')).toBe(true);
    expect(await m.teamInside(ORG, 'E0ACME')).toBe(true);
    // Not granted the app, or another organisation's: Slack's word on the person decides.
    expect(await m.teamInside(ORG, 'T0GLOBEX')).toBe(false);
    expect(m.teamOutside(ORG, 'T0GLOBEX')).toBe(false);
    expect(await membership({ workspaces: 'unknown' }).m.teamInside(ORG, 'T0ACMEDOCS')).toBe(false);
  });
});

describe('a person, by Slack’s word on them', () => {
  it('of a workspace install: their workspace, else the request’s, must be the installed one', async () => {
    const { m, lists } = membership({});
    expect(await m.personInside(WORKSPACE, { teamId: 'T1' }, 'T0OTHER')).toBe(true);
    expect(await m.personInside(WORKSPACE, { teamId: 'T0OTHER' }, 'T1')).toBe(false);
    expect(await m.personInside(WORKSPACE, { teamId: undefined }, 'T1')).toBe(true);
    expect(await m.personInside(WORKSPACE, { teamId: undefined }, undefined)).toBeUndefined();
    // A workspace install in a Grid organisation serves that workspace only, and all of it.
    expect(await m.personInside(WORKSPACE, { teamId: 'T0SIBLING', enterpriseId: 'E0ACME' }, 'T1')).toBe(
      false,
    );
    expect(await m.personInside(WORKSPACE, { teamId: 'T1', enterpriseId: 'E0ACME' }, 'T1')).toBe(true);
    expect(lists()).toBe(0);
  });

  it('of an organisation-wide install: their organisation decides, whatever their workspace', async () => {
    const { m, lists } = membership({ workspaces: ['T0ACMEDOCS'] });
    expect(await m.personInside(ORG, { teamId: 'T0ACMESALES', enterpriseId: 'E0ACME' }, 'T0ACMEDOCS')).toBe(
      true,
    );
    expect(await m.personInside(ORG, { teamId: 'T0GLOBEX', enterpriseId: 'E0GLOBEX' }, 'T0ACMEDOCS')).toBe(
      false,
    );
    // Listed or not, another organisation's person is outside.
    expect(await m.personInside(ORG, { teamId: 'T0ACMEDOCS', enterpriseId: 'E0GLOBEX' }, undefined)).toBe(
      false,
    );
    expect(lists()).toBe(0);
  });

  it('of an organisation-wide install, without an organisation: a listed workspace is inside, an unlisted one outside', async () => {
    const { m } = membership({ workspaces: ['T0ACMEDOCS'] });
    expect(await m.personInside(ORG, { teamId: 'T0ACMEDOCS' }, undefined)).toBe(true);
    expect(await m.personInside(ORG, { teamId: undefined }, 'T0ACMEDOCS')).toBe(true);
    expect(await m.personInside(ORG, { teamId: 'E0ACME' }, undefined)).toBe(true);
    expect(await m.personInside(ORG, { teamId: 'T0OTHER' }, 'T0ACMEDOCS')).toBe(false);
    expect(await m.personInside(ORG, { teamId: undefined }, undefined)).toBeUndefined();
  });

  it('of an organisation-wide install, without an organisation, while its workspaces are unknown: not inside', async () => {
    const { m } = membership({ workspaces: 'unknown' });
    expect(await m.personInside(ORG, { teamId: 'T0ACMEDOCS' }, undefined)).toBeUndefined();
    expect(await m.personInside(ORG, { teamId: 'E0ACME' }, undefined)).toBe(true);
  });
});
