import type { EventKind } from './kind.js';

/** A cluster-wide barrier closing a phase (barrier sync). */
export const barrier: EventKind = { id: 'barrier', label: 'barrier', color: '#ef4444', details: () => [] };
