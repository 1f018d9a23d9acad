import type { TraceColumns } from '@pipeloom/core';
import { maxOver, transfersInFlight, type Steps } from '../counters.js';
import { pixel } from '../raster.js';
import type { Track, TrackKind } from '../track.js';
import { formatTime } from '../viewport.js';

// A counter track per host: transfers in flight (the depth of its copy queues), the most in
// each pixel drawn as a bar. Rebuilt from the measured store at most every REBUILD_MS while a
// run streams, so it costs nothing per batch.

const COLOR = pixel('#a855f7');
const REBUILD_MS = 400;
let cache: { store: TraceColumns; version: number; at: number; steps: Map<string, Steps> } | null = null;

function stepsOf(c: TraceColumns): Map<string, Steps> {
  const now = performance.now();
  if (!cache || cache.store !== c || (cache.version !== c.version && now - cache.at > REBUILD_MS))
    cache = { store: c, version: c.version, at: now, steps: transfersInFlight(c) };
  return cache.steps;
}

export const inFlightKind: TrackKind = {
  id: 'in-flight',
  toggle: { label: 'in flight', title: 'A counter per host: transfers in flight (started, not ended)', swatch: '#a855f7', on: false },
  tracks({ measured }) {
    const hosts = [...new Set(measured.lanes().map((l) => l.host))];
    return hosts.map((host): Track => ({
      kind: 'in-flight',
      host,
      pe: '',
      thread: '',
      order: 0,
      label: `${host} · transfers in flight`,
      height: 16,
      measuredLane: -1,
      paint(f, y0, y1) {
        const s = stepsOf(measured).get(host);
        if (!s || !s.max) return;
        const per = (f.win.t1 - f.win.t0) / f.width;
        for (let x = 0; x < f.width; x++) {
          const v = maxOver(s, f.win.t0 + x * per, f.win.t0 + (x + 1) * per);
          if (!v) continue;
          const top = y1 - Math.max(1, Math.round(((y1 - y0) * v) / s.max));
          for (let y = top; y < y1; y++) f.px[y * f.stride + f.x0 + x] = COLOR;
        }
        f.boxes += f.width;
      },
      hit(t) {
        const s = stepsOf(measured).get(host);
        if (!s) return null;
        return [`${maxOver(s, t, t)} transfers in flight`, `${host} at ${formatTime(t, 1)}`, `at most ${s.max} in the run`];
      },
    }));
  },
};
