import { counterSeries, rangeOver, valueAt, valueBefore, type CounterSeries } from '../counters.js';
import { pixel } from '../raster.js';
import type { Track, TrackKind } from '../track.js';
import { formatTime } from '../viewport.js';
import { counter } from '../kinds/counter.js';

// The trace's own counters (the task bag's depth and tasks in flight, sampled by the
// coordinator): one track per counter, a step line of its value over time on a lightly filled
// area, scaled to the counter's largest value in the run. The samples' lane gets these tracks
// instead of a slice track (a sample has no duration).

const LINE = pixel(counter.color);
const FILL = pixel(counter.color, 0.18);
export const COUNTER_HEIGHT = 28;

const fmt = (v: number) => v.toLocaleString('en', { maximumFractionDigits: 3 });

function counterTrack(s: CounterSeries, order: number): Track {
  return {
    kind: 'counters',
    host: s.host,
    pe: s.pe,
    thread: s.thread,
    order,
    label: `${s.host} · ${s.name}`,
    height: COUNTER_HEIGHT,
    measuredLane: -1,
    paint(f, y0, y1) {
      const st = s.steps;
      const h = y1 - y0 - 2;
      if (h <= 0) return;
      const max = Math.max(st.max, 1e-12);
      // Row of a value: 0 on the bottom row, the run's largest on the top one.
      const rowOf = (v: number) => y1 - 1 - Math.round((h * Math.max(0, Math.min(v, max))) / max);
      const per = (f.win.t1 - f.win.t0) / f.width;
      for (let x = 0; x < f.width; x++) {
        const t = f.win.t0 + x * per;
        const r = rangeOver(st, t, t + per);
        if (!r) continue;
        // A step at the pixel's left edge is drawn in it: the value before joins the range.
        const was = valueBefore(st, t) ?? r.lo;
        const top = rowOf(Math.max(r.hi, was));
        const low = rowOf(Math.min(r.lo, was));
        // The step itself (a change inside this pixel spans lo..hi), then the area under the lowest value.
        for (let y = top; y <= low; y++) f.px[y * f.stride + f.x0 + x] = LINE;
        for (let y = low + 1; y < y1; y++) f.px[y * f.stride + f.x0 + x] = FILL;
      }
      f.boxes += f.width;
    },
    hit(t) {
      const v = valueAt(s.steps, t);
      if (v === null) return null;
      return [`${s.name} ${fmt(v)}`, `${s.host} · ${s.pe} at ${formatTime(t, 1)}`, `at most ${fmt(s.steps.max)} in the run`];
    },
  };
}

export const countersKind: TrackKind = {
  id: 'counters',
  signature: ({ measured }) =>
    counterSeries(measured)
      .map((s) => `${s.lane}/${s.name}`)
      .join(),
  tracks({ measured }) {
    const n = new Map<number, number>();
    return counterSeries(measured).map((s) => {
      const order = n.get(s.lane) ?? 0;
      n.set(s.lane, order + 1);
      return counterTrack(s, order);
    });
  },
};
