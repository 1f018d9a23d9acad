import type { EventKind } from './kind.js';

/** A node's firing on its PE; in a task-bag run one task's, with its id, share and attempt (a requeued task runs again as attempt 2, 3). */
export const fire: EventKind = {
  id: 'fire',
  label: 'fire',
  color: '#3b82f6',
  details: (e) => [
    ...(e.node && e.node !== e.name ? [`node ${e.node}`] : []),
    ...(e.task
      ? [
          `task ${e.task.id}${e.task.share === undefined ? '' : ` · share ${e.task.share}`} · attempt ${e.task.attempt}${e.task.attempt > 1 ? ' (requeued)' : ''}`,
        ]
      : []),
  ],
};
