import { describe, expect, it } from 'vitest';
import {
  AGENT_FIELD_LIMITS,
  agentErrorSchema,
  agentJobSchema,
  isSafeJobId,
  isTerminal,
  TERMINAL_STATUSES,
} from '../../src/agent/schema.js';
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

  it('keeps prLink null, and keeps a malformed address as text (the renderers never link it)', () => {
    expect(agentJobSchema.parse({ ...documented, prLink: null }).prLink).toBeNull();
    expect(agentJobSchema.parse({ ...documented, prLink: '' }).prLink).toBeNull();
    // A pull request was opened whatever the address looks like: "no files changed" would be wrong.
    expect(agentJobSchema.parse({ ...documented, prLink: 'not a url' }).prLink).toBe('not a url');
    expect(agentJobSchema.parse({ ...documented, prLink: 'javascript:alert(1)' }).prLink).toBe(
      'javascript:alert(1)',
    );
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

describe('field lengths', () => {
  const long = (n: number) => 'x'.repeat(n);

  it('keeps every field at its limit', () => {
    const atLimit = {
      id: long(AGENT_FIELD_LIMITS.id),
      status: long(AGENT_FIELD_LIMITS.status),
      source: { repository: long(AGENT_FIELD_LIMITS.repository), ref: long(AGENT_FIELD_LIMITS.ref) },
      model: long(AGENT_FIELD_LIMITS.model),
      prLink: `https://github.com/o/r/pull/1?${long(AGENT_FIELD_LIMITS.prLink - 30)}`,
      createdAt: long(AGENT_FIELD_LIMITS.timestamp),
      archivedAt: long(AGENT_FIELD_LIMITS.timestamp),
    };
    expect(atLimit.prLink).toHaveLength(AGENT_FIELD_LIMITS.prLink);
    expect(agentJobSchema.parse(atLimit)).toEqual(atLimit);
  });

  it('refuses the whole answer for an overlong id', () => {
    expect(agentJobSchema.safeParse({ ...documented, id: long(AGENT_FIELD_LIMITS.id + 1) }).success).toBe(
      false,
    );
    expect(agentJobSchema.safeParse({ ...documented, id: long(10_000_000) }).success).toBe(false);
  });

  it('refuses ids with control characters or that are path segments', () => {
    for (const id of ['job\n1', 'job\u00001', 'job\u007f', 'job\u0085', 'job\u2028', '.', '..']) {
      expect(agentJobSchema.safeParse({ ...documented, id }).success, JSON.stringify(id)).toBe(false);
      expect(isSafeJobId(id)).toBe(false);
    }
    // Encoded in the path, these cannot change it: accepted.
    for (const id of ['job_1', 'a/b', '...', 'ü-1', 'cm0x9f2a-4c1d']) expect(isSafeJobId(id)).toBe(true);
  });

  it('keeps an overlong status as unknown (still running), never failing the record', () => {
    const job = agentJobSchema.parse({ ...documented, status: long(AGENT_FIELD_LIMITS.status + 1) });
    expect(job.status).toBe('unknown');
    expect(isTerminal(job.status)).toBe(false);
  });

  it('drops an overlong repository, ref, model or timestamp (null) and cuts a prLink, keeping the rest', () => {
    const job = agentJobSchema.parse({
      ...documented,
      source: { repository: long(AGENT_FIELD_LIMITS.repository + 1), ref: 'main' },
      model: long(AGENT_FIELD_LIMITS.model + 1),
      prLink: `https://github.com/o/r/pull/1?${long(AGENT_FIELD_LIMITS.prLink)}`,
      createdAt: long(AGENT_FIELD_LIMITS.timestamp + 1),
      archivedAt: long(1_000_000),
    });
    expect(job).toEqual({
      id: 'job_42',
      status: 'completed',
      source: { repository: null, ref: 'main' },
      model: null,
      prLink: `https://github.com/o/r/pull/1?${long(AGENT_FIELD_LIMITS.prLink)}`.slice(
        0,
        AGENT_FIELD_LIMITS.prLink,
      ),
      createdAt: null,
      archivedAt: null,
    });
    expect(
      agentJobSchema.parse({
        ...documented,
        source: { repository: 'r', ref: long(AGENT_FIELD_LIMITS.ref + 1) },
      }).source,
    ).toEqual({ repository: 'r', ref: null });
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

  it('cuts an overlong explanation instead of refusing it', () => {
    expect(agentErrorSchema.parse({ error: 'e'.repeat(100_000) }).error).toHaveLength(1_000);
  });
});
