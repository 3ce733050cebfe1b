import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../src/agent/client.js';
import { getPolicy, postPolicy } from '../../src/agent/errors.js';
import type { AgentAnswer, AgentEndpoint } from '../../src/agent/schema.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { type AgentStandIn, API_KEY, PROJECT_ID, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { listen } from '../helpers/http.js';

const fastPolicies = {
  get: { ...getPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
  post: { ...postPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
};

let stand: AgentStandIn;
let seen: { endpoint: AgentEndpoint; answer: AgentAnswer; seconds: number }[];

beforeEach(async () => {
  stand = await startAgentStandIn();
  seen = [];
});
afterEach(async () => {
  await stand.close();
});

const client = (baseUrl = stand.url, timeoutMs = 1_000) =>
  createAgentClient({
    baseUrl,
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    timeoutMs,
    logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => {} }),
    redact: createRedactor([API_KEY]),
    policies: fastPolicies,
    onRequest: (endpoint, answer, seconds) => seen.push({ endpoint, answer, seconds }),
  });

describe('the agent client’s request report', () => {
  it('reports each attempt with its endpoint, status and duration, retries included', async () => {
    const agent = client();
    const job = await agent.createJob('Document the CLI');
    await agent.sendMessage(job.id, 'Also the SDK');
    stand.fail('get', { status: 503 }, { delayMs: 120 });
    await agent.getJob(job.id);
    expect(seen.map(({ endpoint, answer }) => [endpoint, answer])).toEqual([
      ['create_job', 201],
      ['send_message', 200],
      ['get_job', 503],
      ['get_job', 200],
    ]);
    expect(seen.every((s) => s.seconds > 0 && s.seconds < 5)).toBe(true);
    // The delayed answer took at least its delay.
    expect(seen[3]?.seconds).toBeGreaterThanOrEqual(0.1);
  });

  it('reports a refused key, a time-out and a refused connection', async () => {
    stand.fail('create', { status: 401 });
    await expect(client().createJob('Document the CLI')).rejects.toThrow();
    stand.fail('get', { delayMs: 400 }, { delayMs: 400 }, { delayMs: 400 }, { delayMs: 400 });
    await expect(client(stand.url, 100).getJob('job_1')).rejects.toThrow();
    const closed = await listen((_req, _body, res) => {
      res.end();
    });
    await closed.close();
    await expect(client(closed.url).createJob('Document the CLI')).rejects.toThrow();
    const answers = seen.map(({ endpoint, answer }) => [endpoint, answer]);
    expect(answers[0]).toEqual(['create_job', 401]);
    expect(answers.filter(([e]) => e === 'get_job').every(([, a]) => a === 'timeout')).toBe(true);
    expect(answers.filter(([e]) => e === 'get_job').length).toBeGreaterThanOrEqual(1);
    expect(answers.at(-1)).toEqual(['create_job', 'network_error']);
  });
});
