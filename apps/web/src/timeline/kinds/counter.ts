import type { EventKind } from './kind.js';

/** A sampled value (the task bag's depth, tasks in flight): drawn by a counter track, not as a slice. */
export const counter: EventKind = {
  id: 'counter',
  label: 'counter',
  color: '#0d9488',
  details: (e) => (e.value === undefined ? [] : [`value ${e.value.toLocaleString('en')}`]),
};
