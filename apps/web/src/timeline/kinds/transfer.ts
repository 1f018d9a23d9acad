import type { EventKind } from './kind.js';

/** Data crossing a link into a buffer node; its bytes, and where it came from. */
export const transfer: EventKind = {
  id: 'transfer',
  label: 'transfer',
  color: '#f59e0b',
  details: (e) => [...(e.bytes ? [`${e.bytes.toLocaleString()} bytes`] : []), ...(e.from && e.buffer ? [`${e.from} -> ${e.buffer}`] : [])],
};
