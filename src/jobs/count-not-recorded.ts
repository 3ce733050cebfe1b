import type { JobService } from './job-service.js';
import type { InstructionSurface, MetricsHooks } from './metrics-hooks.js';

/**
 * The job service, counting every instruction it could not record as it arrived (the store
 * failed): the listeners then tell the person, or let Slack deliver the event again, and each
 * such attempt counts once as `not_recorded`.
 */
export function countNotRecorded(jobs: JobService, metrics: Pick<MetricsHooks, 'instruction'>): JobService {
  const counted =
    <A extends unknown[], R>(surface: InstructionSurface, accept: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await accept(...args);
      } catch (error) {
        metrics.instruction(surface, 'not_recorded');
        throw error;
      }
    };
  return {
    ...jobs,
    acceptCommand: counted('command', (request) => jobs.acceptCommand(request)),
    acceptMention: counted('mention', (request) => jobs.acceptMention(request)),
    acceptDirect: counted('direct', (request) => jobs.acceptDirect(request)),
    acceptShortcut: counted('shortcut', (request) => jobs.acceptShortcut(request)),
    acceptStep: counted('workflow', (request) => jobs.acceptStep(request)),
    acceptReply: counted('reply', (request) => jobs.acceptReply(request)),
    // Every follow-up counts as a reply, whatever carried it.
    acceptFollowUp: counted('reply', (request) => jobs.acceptFollowUp(request)),
  };
}
