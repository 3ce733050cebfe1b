import type { Config } from './config.js';

/** What says which documentation project serves where: `DOCS_AGENT_PROJECT_ID` and `CHANNEL_PROJECTS`. */
export interface ProjectSettings {
  agent: Pick<Config['agent'], 'projectId'>;
  channelProjects: Config['channelProjects'];
}

/** The project a job asked for in `channelId` runs in: the channel's own, else the deployment's. */
export function projectForChannel(settings: ProjectSettings, channelId: string): string {
  return settings.channelProjects.get(channelId) ?? settings.agent.projectId;
}

/** Every project the deployment serves, each once, the deployment's default first. */
export function servedProjects(settings: ProjectSettings): string[] {
  return [...new Set([settings.agent.projectId, ...settings.channelProjects.values()])];
}

/** Whether `project` is one the deployment serves (the default, or one a channel runs in). */
export function servesProject(settings: ProjectSettings, project: string): boolean {
  return servedProjects(settings).includes(project);
}

/**
 * The project a recorded job or use ran in: one recorded without a project (before projects per
 * channel existed) ran in the deployment's default.
 */
export function projectOfRecord(projectId: string | null | undefined, defaultProject: string): string {
  return projectId ?? defaultProject;
}
