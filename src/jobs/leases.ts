import {
  GET_MAX_RETRY_AFTER_MS,
  getPolicy,
  longestAgentCallMs,
  POST_MAX_RETRY_AFTER_MS,
  postPolicy,
} from '../agent/retry-policies.js';
import { type Leases, leaseFor } from '../cluster/lease.js';
import { SLACK_CALL_TIMEOUT_MS } from '../slack/client-options.js';

/**
 * Every lease, from the agent API time-out (`DOCS_AGENT_API_TIMEOUT_MS`) and the fixed Slack call
 * time-out and retry policies: a claim lasts as long as the work it guards, whatever that is.
 */
export function leasesFor(agentTimeoutMs: number): Leases {
  return {
    agentWrite: leaseFor(longestAgentCallMs(agentTimeoutMs, postPolicy, POST_MAX_RETRY_AFTER_MS)),
    agentRead: leaseFor(longestAgentCallMs(agentTimeoutMs, getPolicy, GET_MAX_RETRY_AFTER_MS)),
    delivery: leaseFor(SLACK_CALL_TIMEOUT_MS),
  };
}
