/**
 * An organisation-wide install (Enterprise Grid, `org_deploy_enabled`), driven through signed
 * requests in the shapes Slack documents for one: people of the organisation's workspaces are
 * served (also of a workspace that has not been granted the app), a person of another
 * organisation is refused, on every surface: a command, a mention, an interaction with
 * `"team": null`, a workflow step.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { START_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import {
  installOrgWide,
  ORG,
  orgBlockActions,
  orgCommand,
  orgEventEnvelope,
  PEOPLE,
  type Person,
} from '../helpers/org-install.js';
import { postSigned } from '../helpers/signing.js';
import type { OrgInstall } from '../helpers/slack-stand-in.js';
import { functionExecuted } from '../helpers/workflow-steps.js';

let h: Harness;
afterEach(() => stopChecked(h));

/** The app on a Slack whose bot token is the organisation's, auth.test answering as given. */
async function start(authTestTeamId: OrgInstall['authTestTeamId'] = 'enterprise') {
  h = await startHarness(
    {},
    { seed: async (_store, slack) => installOrgWide(slack, { ...ORG, authTestTeamId }) },
  );
}

const { anna, ben, sam, max } = PEOPLE;
const json = { contentType: 'application/json' };
const creates = () => h.agent.requestsFor('create').length;

/** `/docs-agent <text>` typed by `person` in a channel of their workspace. */
async function command(person: Person, text: string) {
  const id = `cmd-${person.id}`;
  const body = orgCommand(person, { text, channel_id: 'C0DOCS', response_url: h.slack.responseUrl(id) });
  expect((await postSigned(h.base(), body)).status).toBe(200);
  return id;
}

/** What the bot answered privately through a request's response_url. */
const answered = async (id: string) =>
  String((await waitFor(id, () => h.slack.responses.find((r) => r.path === `/respond/${id}`))).body.text);

/** A signed event of the organisation, in `teamId`'s workspace. */
const event = async (e: Record<string, unknown>, teamId: string) =>
  expect((await postSigned(h.base(), orgEventEnvelope(e, teamId), json)).status).toBe(200);

const ephemeralsTo = (user: string) =>
  h.slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === user);

/** The job `person` asked for, once the agent has it. */
const activeJobOf = (person: Person) =>
  waitFor(`${person.id}'s job running`, async () => {
    const [job] = await h.app.store.recentJobs({ requesterId: person.id }, 1);
    return job?.phase === 'active' ? job : undefined;
  });

/** Few Slack calls for the organisation: its workspaces are listed at most once (cached). */
const teamsListed = () => h.slack.callsTo('auth.teams.list').length;

describe('an organisation-wide install', () => {
  it.each([
    ['the organisation’s own id', 'enterprise'],
    ['an empty one', 'empty'],
    ['none', 'absent'],
  ] as const)(
    'serves commands of people of any of its workspaces and refuses another organisation, when auth.test gives %s as team_id',
    async (_what, teamId) => {
      await start(teamId);
      for (const person of [anna, ben, sam]) {
        const before = creates();
        await command(person, `Document the ${person.teamId} onboarding`);
        await waitFor(`${person.id}'s job`, () => creates() === before + 1);
      }
      expect(await answered(await command(max, 'Publish our pricing'))).toContain(
        'serves another Slack workspace',
      );
      await h.settled();
      expect(creates()).toBe(3);
      expect(teamsListed()).toBeLessThanOrEqual(1);
    },
  );

  it('serves mentions of people of two of its workspaces, and refuses a person of another organisation in a shared channel', async () => {
    await start();
    const mention = (person: Person, channel: string, ts: string, fields: Record<string, unknown> = {}) => ({
      type: 'app_mention',
      user: person.id,
      text: `<@${ORG.botUserId}> Document the SSO setup`,
      ts,
      team: person.teamId,
      channel,
      event_ts: ts,
      ...fields,
    });
    await event(mention(anna, 'C0DOCS', '1700000900.000100'), anna.teamId);
    await event(mention(ben, 'C0ENG', '1700000900.000200'), ben.teamId);
    await waitFor('two jobs', () => creates() === 2);
    // A Slack Connect channel of the organisation's docs workspace, shared with another organisation.
    const shared = { user_team: max.teamId, source_team: max.teamId };
    await event(mention(max, 'C0SHARED', '1700000900.000300', shared), anna.teamId);
    const note = await waitFor('private refusal', () => ephemeralsTo(max.id)[0]);
    expect(String(note.args.text)).toContain('serves another Slack workspace');
    await h.settled();
    expect(creates()).toBe(2);
    expect(teamsListed()).toBeLessThanOrEqual(1);
  });

  it('counts feedback pressed with `"team": null` by people of two of its workspaces, and not another organisation’s', async () => {
    await start();
    await command(anna, 'Document the SSO setup');
    const job = await activeJobOf(anna);
    h.agent.complete(`job_${h.agent.jobs.size}`, 'https://github.com/example/docs/pull/7');
    const post = await waitFor('outcome post', () =>
      h.slack
        .threadPosts(String(job.threadTs))
        .find((m) => m.blocks?.some((b) => b.type === 'context_actions')),
    );
    const press = async (person: Person) => {
      const id = `fb-${person.id}`;
      const where = { channel: 'C0DOCS', messageTs: post.ts, responseUrl: h.slack.responseUrl(id) };
      const action = {
        type: 'feedback_buttons',
        action_id: 'outcome_feedback',
        value: `positive:${job.id}:1`,
      };
      expect((await postSigned(h.base(), orgBlockActions(person, where, action))).status).toBe(200);
      return answered(id);
    };
    expect(await press(anna)).toContain('feedback on this outcome is recorded');
    expect(await press(ben)).toContain('feedback on this outcome is recorded');
    expect(await press(max)).toContain(
      'serves another Slack workspace or organisation, so your feedback was not counted',
    );
    expect(await h.app.store.feedbackTotals()).toEqual({ positive: 2, negative: 0, reasons: 0 });
  });

  it('runs the "Start a docs agent job" step for people of two of its workspaces, and refuses another organisation’s', async () => {
    await start();
    const step = async (person: Person, teamId: string) => {
      const executionId = `Fx0ORG${person.id}`;
      const token = `xwfp-0000000000-test-${person.id.toLowerCase()}`;
      h.slack.steps.functionTokens.set(token, executionId);
      const inputs = {
        instruction: `Document the ${person.teamId} release`,
        channel_id: 'C0DOCS',
        user_id: person.id,
        user_context: { id: person.id, secret: 'test-user-context-secret' },
      };
      await event(
        functionExecuted({ callbackId: START_STEP_CALLBACK_ID, executionId, inputs, token }),
        teamId,
      );
      return waitFor(`${person.id}'s step answered`, () => h.slack.steps.completionsOf(executionId)[0]);
    };
    expect((await step(anna, anna.teamId)).method).toBe('functions.completeSuccess');
    expect((await step(ben, ben.teamId)).method).toBe('functions.completeSuccess');
    // A workflow of the docs workspace naming a person of another organisation.
    expect((await step(max, anna.teamId)).method).toBe('functions.completeError');
    await h.settled();
    expect(creates()).toBe(2);
  });
});
