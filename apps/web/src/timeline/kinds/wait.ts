import type { EventKind } from './kind.js';

/** A thread waiting for data or a free slot (self-timed). */
export const wait: EventKind = { id: 'wait', label: 'wait', color: '#cbd5e1', details: () => [] };
