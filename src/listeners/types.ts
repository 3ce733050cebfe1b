import type { JobService } from '../jobs/job-service.js';
import type { Logger } from '../logger.js';
import type { TaskTracker } from '../util/tasks.js';

/** What every listener is given. Listeners parse, acknowledge, and hand over; no business rules. */
export interface ListenerDeps {
  jobs: JobService;
  tasks: TaskTracker;
  logger: Logger;
}
