import { projectOfRecord } from '../config/projects.js';
import { type AgentClient, type AgentClientOptions, createAgentClient } from './client.js';

/**
 * One agent client per documentation project (`CHANNEL_PROJECTS`), made when a project is first
 * used: every client shares the same options (key, budget, hooks), only the project differs.
 */
export function agentsPerProject(
  options: Omit<AgentClientOptions, 'projectId'> & {
    /** The deployment's project, for jobs whose project is null. */
    defaultProject: string;
    /** Wraps each client as it is made (the composition root holds it behind the yield gate). */
    wrap: (client: AgentClient) => AgentClient;
  },
): (projectId: string | null) => AgentClient {
  const { defaultProject, wrap, ...shared } = options;
  const agents = new Map<string, AgentClient>();
  return (projectId) => {
    const id = projectOfRecord(projectId, defaultProject);
    let agent = agents.get(id);
    if (!agent) {
      agent = wrap(createAgentClient({ ...shared, projectId: id }));
      agents.set(id, agent);
    }
    return agent;
  };
}
