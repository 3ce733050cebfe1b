/**
 * Fakes for what is across the network in unit tests of listeners and job flows: the Slack
 * gateway, the agent API client and the Web API client auth.test reads. Everything else in those
 * tests is the real code. Each fake records its calls (vi.fn) and answers like a healthy
 * workspace; a test overrides one method to make it fail.
 */
import type { WebClient } from '@slack/web-api';
import { vi } from 'vitest';
import type { AgentClient } from '../../src/agent/client.js';
import { type AgentJob, agentJobSchema } from '../../src/agent/schema.js';
import type { SlackGateway, SlackUser } from '../../src/slack/gateway.js';
import type { Identity } from '../../src/slack/identity.js';
import { BOT_USER_ID } from './slack-stand-in.js';

/** The workspace the fakes belong to, and the bot's own ids in it (its user id: `BOT_USER_ID`). */
export const TEAM = 'T0TEST';
export const BOT_ID = 'B0BOTTEST';
export const WORKSPACE_URL = 'https://example-test.slack.com/';

/** A Web API client whose auth.test names the test bot; the only call `createIdentity` makes. */
export const fakeWebClient = (): WebClient =>
  ({
    auth: {
      test: vi.fn(async () => ({
        ok: true,
        team_id: TEAM,
        user_id: BOT_USER_ID,
        bot_id: BOT_ID,
        url: WORKSPACE_URL,
      })),
    },
  }) as unknown as WebClient;

/**
 * The identity of a bot installed in one workspace, as the access policy reads it (none known
 * yet when undefined: auth.test has not answered and no request has named it).
 */
export const installedIn = (teamId: string | undefined): Identity =>
  ({
    get: async () => (teamId ? { teamId } : undefined),
    installation: () => (teamId ? { kind: 'workspace', teamId } : undefined),
    installedTeamId: () => teamId,
    organizationWorkspaces: async () => undefined,
  }) as unknown as Identity;

/**
 * The identity of a bot installed organisation-wide (Enterprise Grid), as the access policy
 * reads it: `workspaces` are those auth.teams.list names (undefined: Slack cannot say).
 */
export const installedOrgWide = (enterpriseId: string, workspaces: string[] | undefined): Identity =>
  ({
    get: async () => ({ teamId: undefined }),
    installation: () => ({ kind: 'organization', enterpriseId }),
    installedTeamId: () => undefined,
    organizationWorkspaces: async () => (workspaces ? new Set(workspaces) : undefined),
  }) as unknown as Identity;

/** A member of {@link TEAM}, not a guest. */
export const member = (name = 'Test Person'): SlackUser => ({
  name,
  isRestricted: false,
  isUltraRestricted: false,
  isBot: false,
  deleted: false,
  teamId: TEAM,
});

/** A multi-channel guest of {@link TEAM}. */
export const guest = (name = 'Guest'): SlackUser => ({ ...member(name), isRestricted: true });

export type FakeSlack = { [K in keyof SlackGateway]: SlackGateway[K] & ReturnType<typeof vi.fn> };

/** A Slack gateway that accepts every call; posts get increasing ts values. */
export function fakeSlack(): FakeSlack {
  let ts = 1_700_000_000;
  return {
    postMessage: vi.fn(async () => `${++ts}.000100`),
    updateMessage: vi.fn(async () => {}),
    addReaction: vi.fn(async () => {}),
    removeReaction: vi.fn(async () => {}),
    threadMessages: vi.fn(async () => []),
    conversationFacts: vi.fn(async () => ({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: false,
    })),
    openView: vi.fn(async () => {}),
    publishHome: vi.fn(async () => {}),
    assistantThread: vi.fn(async () => {}),
    postEphemeral: vi.fn(async () => {}),
    respond: vi.fn(async () => {}),
    userInfo: vi.fn(async () => member()),
    findInChannel: vi.fn(async () => undefined),
    findPosted: vi.fn(async () => undefined),
    findUnmarked: vi.fn(async () => undefined),
  } as FakeSlack;
}

/** An agent job as the API answers it (parsed like the client parses it). */
export const agentJob = (fields: Partial<Record<string, unknown>> = {}): AgentJob =>
  agentJobSchema.parse({ id: 'job_test_1', status: 'active', ...fields });

export type FakeAgent = { [K in keyof AgentClient]: AgentClient[K] & ReturnType<typeof vi.fn> };

/** An agent API client that accepts every job and follow-up, and reports every job active. */
export function fakeAgent(): FakeAgent {
  return {
    createJob: vi.fn(async () => agentJob()),
    sendMessage: vi.fn(async (id: string) => agentJob({ id })),
    getJob: vi.fn(async (id: string) => agentJob({ id })),
  } as FakeAgent;
}
