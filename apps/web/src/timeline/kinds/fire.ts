import type { EventKind } from './kind.js';

/** A node's firing on its PE. */
export const fire: EventKind = { id: 'fire', label: 'fire', color: '#3b82f6', details: (e) => (e.node && e.node !== e.name ? [`node ${e.node}`] : []) };
