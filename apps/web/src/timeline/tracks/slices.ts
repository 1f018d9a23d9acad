import { graphPes, isMemoryLane } from '@pipeloom/core';
import { KIND_COLORS, lanePairs, pixel, rasterLane } from '../raster.js';
import { markRetries } from '../retries.js';
import type { Track, TrackKind } from '../track.js';
import { describeEvent } from './describe.js';

// The measured slices of each lane (host / PE / thread), coloured by event kind; wide ones
// carry their names (a task-bag fire: `node[share]@iteration (attempt)`), and a task's second
// or later attempt is hatched, so a requeue is seen. Lanes the plan has and the run has not
// (yet) get an empty track, so the layout does not jump when the first events arrive. A lane
// of counter samples gets counter tracks instead (tracks/counters.ts).

const COLORS = KIND_COLORS.map((c) => pixel(c));
/** A requeued task's frame and hatching (retries.ts). */
export const RETRY_COLOR = pixel('#1e3a8a');
export const RETRY_STRIPE = pixel('#bfdbfe');
export const SLICE_HEIGHT = 16;

export const slices: TrackKind = {
  id: 'slices',
  tracks({ measured, predicted, shown, graph }) {
    const pairs = lanePairs(measured, shown.has('predicted') ? predicted : undefined).filter((l) => l.measured < 0 || !measured.isCounterLane(l.measured));
    // Copies between two CPU PEs of one host say so (core names them; the graph says which PEs are which).
    const peOf = graph ? graphPes(graph) : undefined;
    return pairs.map((l): Track => ({
      kind: 'slices',
      host: l.host,
      pe: l.pe,
      thread: l.thread,
      order: 0,
      label: `${l.host} · ${l.pe} · ${l.thread}${peOf && isMemoryLane(l.pe, l.thread, peOf) ? ' (memory)' : ''}`,
      height: SLICE_HEIGHT,
      measuredLane: l.measured,
      paint(f, y0, y1, mid) {
        const named: number[] = [];
        const stats = { boxes: 0 };
        rasterLane(f.px, f.stride, measured, l.measured, f.win, f.x0, f.width, y0, y1, COLORS, named, 40 * f.dpr, stats);
        f.boxes += stats.boxes + markRetries(f.px, f.stride, measured, l.measured, f.win.t0, f.win.t1, f.x0, f.width, y0, y1, RETRY_COLOR, RETRY_STRIPE);
        const scale = f.width / f.dpr / (f.win.t1 - f.win.t0);
        for (const i of named)
          f.labels.push({
            text: measured.names[measured.name[i]],
            x0: (measured.start[i] - f.win.t0) * scale,
            x1: (measured.end[i] - f.win.t0) * scale,
            y: mid,
          });
      },
      hit(t, slack) {
        if (l.measured < 0) return null;
        const i = measured.hit(l.measured, t, slack);
        return i < 0 ? null : describeEvent(measured, i);
      },
    }));
  },
};
