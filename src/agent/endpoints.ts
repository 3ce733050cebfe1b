/** The three agent API operations, as the client reports them (and as metric label values). */
export type AgentEndpoint = 'create_job' | 'send_message' | 'get_job';

/** How an agent API request ended: the HTTP status it answered, or no answer at all. */
export type AgentAnswer = number | 'timeout' | 'network_error';
