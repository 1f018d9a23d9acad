import type { TraceColumns } from '@pipeloom/core';
import { formatDuration, formatTime } from '../viewport.js';
import { EVENT_KINDS } from '../kinds/index.js';

/** The tooltip of event i: what it is, where, when, and what its kind adds (bytes of a transfer). */
export function describeEvent(c: TraceColumns, i: number, prefix = ''): string[] {
  const e = c.event(i);
  return [
    `${prefix}${e.kind} ${e.name}`,
    `${e.host} · ${e.pe} · ${e.thread}`,
    `iteration ${e.iteration} · cycle ${e.cycle}`,
    `${formatDuration(e.end - e.start)} at ${formatTime(e.start, 1)}`,
    ...EVENT_KINDS[c.kind[i]].details(e),
  ];
}
