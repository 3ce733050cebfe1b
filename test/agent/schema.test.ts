import { describe, expect, it } from 'vitest';
import { agentErrorSchema, agentJobSchema, isTerminal, TERMINAL_STATUSES } from '../../src/agent/schema.js';
import { openApiValidators } from '../helpers/agent-stand-in.js';

const documented = {
  id: 'job_42',
  status: 'completed',
  source: { repository: 'https://github.com/org/repo', ref: 'docs-agent/job-42' },
  model: 'sonnet',
  prLink: 'https://github.com/org/repo/pull/123',
  createdAt: '2026-08-21T10:00:00.000Z',
  archivedAt: null,
};

describe('agentJobSchema', () => {
  it('parses a job exactly as the OpenAPI document describes it', () => {
    // Guard: the fixture really is a documented AgentJob.
    const v = openApiValidators();
    expect(v.agentJob(documented), JSON.stringify(v.agentJob.errors)).toBe(true);
    expect(agentJobSchema.parse(documented)).toEqual(documented);
  });

  it('keeps an unknown status as the string and drops unknown fields', () => {
    const job = agentJobSchema.parse({
      ...documented,
      status: 'queued',
      priority: 'high',
      source: { ...documented.source, commit: 'abc123' },
    });
    expect(job.status).toBe('queued');
    expect(job).not.toHaveProperty('priority');
    expect(job.source).toEqual({ repository: 'https://github.com/org/repo', ref: 'docs-agent/job-42' });
    expect(isTerminal(job.status)).toBe(false);
  });

  it('turns missing optional fields into null', () => {
    expect(agentJobSchema.parse({ id: 'job_1', status: 'active' })).toEqual({
      id: 'job_1',
      status: 'active',
      source: null,
      model: null,
      prLink: null,
      createdAt: null,
      archivedAt: null,
    });
  });

  it('keeps prLink null, and makes a malformed prLink null instead of failing the record', () => {
    expect(agentJobSchema.parse({ ...documented, prLink: null }).prLink).toBeNull();
    expect(agentJobSchema.parse({ ...documented, prLink: 'not a url' }).prLink).toBeNull();
    expect(agentJobSchema.parse({ ...documented, prLink: 'javascript:alert(1)' }).prLink).toBeNull();
    expect(agentJobSchema.parse({ ...documented, prLink: 42 }).prLink).toBeNull();
  });

  it('keeps a source whose ref is null', () => {
    const job = agentJobSchema.parse({
      ...documented,
      source: { repository: 'https://github.com/o/r', ref: null },
    });
    expect(job.source).toEqual({ repository: 'https://github.com/o/r', ref: null });
  });

  it('tolerates a malformed optional field or status without failing the record', () => {
    const job = agentJobSchema.parse({ ...documented, status: 7, model: {}, source: 'repo', archivedAt: 5 });
    expect(job).toMatchObject({
      id: 'job_42',
      status: 'unknown',
      model: null,
      source: null,
      archivedAt: null,
    });
    expect(isTerminal(job.status)).toBe(false);
  });

  it('rejects a record without an id, or one that is not an object', () => {
    expect(agentJobSchema.safeParse({ ...documented, id: undefined }).success).toBe(false);
    expect(agentJobSchema.safeParse({ ...documented, id: '' }).success).toBe(false);
    expect(agentJobSchema.safeParse([documented]).success).toBe(false);
    expect(agentJobSchema.safeParse(null).success).toBe(false);
  });
});

describe('isTerminal', () => {
  it('is true exactly for completed, archived and failed', () => {
    expect(TERMINAL_STATUSES).toEqual(['completed', 'archived', 'failed']);
    expect(['active', 'completed', 'archived', 'failed', 'paused', ''].filter(isTerminal)).toEqual([
      'completed',
      'archived',
      'failed',
    ]);
  });
});

describe('agentErrorSchema', () => {
  it('reads the documented error body', () => {
    expect(agentErrorSchema.parse({ error: 'Job not found' })).toEqual({ error: 'Job not found' });
    expect(agentErrorSchema.safeParse({ message: 'Job not found' }).success).toBe(false);
  });
});
