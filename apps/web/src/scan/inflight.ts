import type { TraceColumns } from '@pipeloom/core';

// A fire's own time on its PE. A GPU PE takes several dispatches at once (submitted together,
// read back together), so its fires of one batch overlap and each one's end - start counts the
// batch's time again; a CPU PE's fires never overlap. Both the timeline (lanes.ts) and the
// measured speedup (measured.ts) count a fire from when the fires before it on its lane in its
// iteration ended: the batch's time once, shared out in turn.

/**
 * Where each of `fires` (event numbers in `c`) starts its own time: its start, or the latest
 * end of the fires before it (by start) on its lane in its iteration, capped at its own end.
 * Parallel to `fires`, in `c`'s microseconds.
 */
export function ownStarts(c: TraceColumns, fires: readonly number[]): Float64Array {
  const from = new Float64Array(fires.length);
  const byLane = new Map<string, number[]>();
  fires.forEach((i, k) => {
    const key = `${c.iteration[i]}:${c.lane[i]}`;
    const list = byLane.get(key);
    if (list) list.push(k);
    else byLane.set(key, [k]);
  });
  for (const list of byLane.values()) {
    list.sort((a, b) => c.start[fires[a]] - c.start[fires[b]] || c.end[fires[a]] - c.end[fires[b]]);
    let until = -Infinity;
    for (const k of list) {
      const i = fires[k];
      from[k] = Math.min(c.end[i], Math.max(c.start[i], until));
      until = Math.max(until, c.end[i]);
    }
  }
  return from;
}
