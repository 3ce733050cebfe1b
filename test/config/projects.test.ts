import { describe, expect, it } from 'vitest';
import {
  projectForChannel,
  projectOfRecord,
  servedProjects,
  servesProject,
} from '../../src/config/projects.js';

const settings = {
  agent: { projectId: 'docs' },
  channelProjects: new Map([
    ['C0SDK', 'sdk-docs'],
    ['C0API', 'api-docs'],
    ['C0SDK2', 'sdk-docs'],
  ]),
};

describe('which documentation project serves where', () => {
  it("runs a job in its channel's project, else in the deployment's", () => {
    expect(projectForChannel(settings, 'C0SDK')).toBe('sdk-docs');
    expect(projectForChannel(settings, 'C0OTHER')).toBe('docs');
  });

  it('lists every project served once, the default first', () => {
    expect(servedProjects(settings)).toEqual(['docs', 'sdk-docs', 'api-docs']);
    expect(
      servedProjects({ agent: { projectId: 'docs' }, channelProjects: new Map([['C0A', 'docs']]) }),
    ).toEqual(['docs']);
  });

  it('serves the default and the channels’ projects, nothing else', () => {
    expect(servesProject(settings, 'docs')).toBe(true);
    expect(servesProject(settings, 'api-docs')).toBe(true);
    expect(servesProject(settings, 'other-docs')).toBe(false);
  });

  it('counts a record without a project as the default', () => {
    expect(projectOfRecord(null, 'docs')).toBe('docs');
    expect(projectOfRecord(undefined, 'docs')).toBe('docs');
    expect(projectOfRecord('sdk-docs', 'docs')).toBe('sdk-docs');
  });
});
