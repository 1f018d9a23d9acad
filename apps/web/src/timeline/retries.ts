import type { TraceColumns } from '@pipeloom/core';

// Task-bag fires of a second or later attempt (a task requeued after its PE left the pool),
// per lane and sorted by start, so a slice track marks them without scanning its window's
// events. Events are only appended, so each call reads just the ones that arrived since the last.

interface Retried {
  /** Events of the store read so far. */
  seen: number;
  /** Lane -> its retried events' numbers, sorted by start. */
  byLane: Map<number, number[]>;
}

const cache = new WeakMap<TraceColumns, Retried>();

/** The events of `lane` with attempt > 1, sorted by start (do not mutate). */
export function retriedIn(c: TraceColumns, lane: number): readonly number[] {
  let r = cache.get(c);
  if (!r) cache.set(c, (r = { seen: 0, byLane: new Map() }));
  for (let i = r.seen; i < c.length; i++) {
    if (c.attempt[i] <= 1) continue;
    let list = r.byLane.get(c.lane[i]);
    if (!list) r.byLane.set(c.lane[i], (list = []));
    // Usually in order; a late batch from another agent is inserted in place.
    let k = list.length;
    while (k > 0 && c.start[list[k - 1]] > c.start[i]) k--;
    list.splice(k, 0, i);
  }
  r.seen = c.length;
  return r.byLane.get(lane) ?? [];
}

/**
 * Hatches the retried events of a lane that show in the window: a 1 px frame in `frame` and
 * diagonal stripes in `stripe` every 4 px over the slice's own colour (light, so its name
 * stays readable), so a requeue reads at any zoom.
 */
export function markRetries(
  px: Uint32Array,
  stride: number,
  c: TraceColumns,
  lane: number,
  t0: number,
  t1: number,
  x0: number,
  width: number,
  y0: number,
  y1: number,
  frame: number,
  stripe: number,
): number {
  if (lane < 0) return 0;
  const list = retriedIn(c, lane);
  if (!list.length) return 0;
  const scale = width / (t1 - t0);
  let marked = 0;
  for (const i of list) {
    if (c.start[i] > t1) break;
    if (c.end[i] < t0) continue;
    const a = Math.max(0, Math.round((c.start[i] - t0) * scale));
    const b = Math.min(width, Math.max(a + 1, Math.round((c.end[i] - t0) * scale)));
    for (let y = y0; y < y1; y++) {
      const row = y * stride + x0;
      const edge = y === y0 || y === y1 - 1;
      for (let x = a; x < b; x++) {
        if (edge || x === a || x === b - 1) px[row + x] = frame;
        else if ((x + y) % 4 === 0) px[row + x] = stripe;
      }
    }
    marked++;
  }
  return marked;
}
