/**
 * Instructions the agent API accepts per project per hour (its documented limit). Project quotas
 * default to it, and the status report counts against it.
 */
export const AGENT_HOURLY_LIMIT = 100;
