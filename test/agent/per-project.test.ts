import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentClient } from '../../src/agent/client.js';
import { agentsPerProject } from '../../src/agent/per-project.js';
import { getPolicy, postPolicy } from '../../src/agent/retry-policies.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { type AgentStandIn, API_KEY, PROJECT_ID, startAgentStandIn } from '../helpers/agent-stand-in.js';

const OTHER_PROJECT = 'proj_handbook';

let stand: AgentStandIn;
let wrapped: AgentClient[];

beforeEach(async () => {
  stand = await startAgentStandIn({ projects: [PROJECT_ID, OTHER_PROJECT] });
  wrapped = [];
});

afterEach(async () => {
  await stand.close();
  expect(stand.violations).toEqual([]);
});

function agents() {
  return agentsPerProject({
    baseUrl: stand.url,
    apiKey: API_KEY,
    timeoutMs: 2_000,
    logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => undefined }),
    redact: createRedactor([API_KEY]),
    policies: {
      get: { ...getPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
      post: { ...postPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
    },
    defaultProject: PROJECT_ID,
    wrap: (client) => {
      wrapped.push(client);
      return client;
    },
  });
}

describe('agentsPerProject', () => {
  it('makes one client per project, on first use, and hands the same one back after', () => {
    const agentFor = agents();
    expect(wrapped).toHaveLength(0);
    const first = agentFor(OTHER_PROJECT);
    expect(agentFor(OTHER_PROJECT)).toBe(first);
    expect(wrapped).toHaveLength(1);
    const other = agentFor(PROJECT_ID);
    expect(other).not.toBe(first);
    expect(wrapped).toHaveLength(2);
  });

  it("runs a job recorded without a project in the deployment's default, with that project's client", () => {
    const agentFor = agents();
    const unrecorded = agentFor(null);
    expect(agentFor(PROJECT_ID)).toBe(unrecorded);
    expect(wrapped).toHaveLength(1);
  });

  it('sends each client to its own project, with the shared key', async () => {
    const agentFor = agents();
    const inOther = await agentFor(OTHER_PROJECT).createJob('Document the handbook');
    const inDefault = await agentFor(null).createJob('Document the CLI');
    await agentFor(OTHER_PROJECT).getJob(inOther.id);
    expect(stand.requests.map((r) => [r.op, r.projectId])).toEqual([
      ['create', OTHER_PROJECT],
      ['create', PROJECT_ID],
      ['get', OTHER_PROJECT],
    ]);
    // A job lives in its project: the other project's client cannot reach it.
    await expect(agentFor(PROJECT_ID).getJob(inOther.id)).rejects.toThrow(/404/);
    expect(inDefault.id).not.toBe(inOther.id);
  });

  it('hands out what the wrapper returns, not the bare client', () => {
    const guarded: AgentClient = {
      createJob: async () => Promise.reject(new Error('held')),
      sendMessage: async () => Promise.reject(new Error('held')),
      getJob: async () => Promise.reject(new Error('held')),
    };
    const agentFor = agentsPerProject({
      baseUrl: stand.url,
      apiKey: API_KEY,
      timeoutMs: 1_000,
      logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => undefined }),
      redact: createRedactor([API_KEY]),
      defaultProject: PROJECT_ID,
      wrap: () => guarded,
    });
    expect(agentFor('proj_any')).toBe(guarded);
  });
});
