import type { TraceColumns } from '@pipeloom/core';
import type { Window } from './viewport.js';
import { EVENT_KINDS } from './kinds/index.js';

// Lanes: one per host / PE / thread, like the paper's Fig 23. A slice track draws its lane from a
// column store for a time window: a binary search finds the first visible event, and runs of
// events narrower than a pixel are merged into one box by jumping (binary search again) to
// the first event of the next pixel, so a frame costs about one step per pixel, not per event.

/** Slice colours by core's kind code (the registered event kinds'). */
export const KIND_COLORS: readonly string[] = EVENT_KINDS.map((k) => k.color);

/** A lane (host / PE / thread) and where it is in each store. */
export interface LanePair {
  key: string;
  host: string;
  pe: string;
  thread: string;
  /** Lane in the measured store (-1: none yet). */
  measured: number;
  /** Lane in the predicted store (-1: none). */
  predicted: number;
}

export const laneKey = (host: string, pe: string, thread: string) => `${host}/${pe}/${thread}`;

/** The union of both stores' lanes, ordered host, PE, main thread first. */
export function lanePairs(measured: TraceColumns, predicted?: TraceColumns): LanePair[] {
  const map = new Map<string, LanePair>();
  for (const l of measured.lanes())
    map.set(laneKey(l.host, l.pe, l.thread), {
      key: laneKey(l.host, l.pe, l.thread),
      host: l.host,
      pe: l.pe,
      thread: l.thread,
      measured: l.index,
      predicted: -1,
    });
  if (predicted)
    for (const l of predicted.lanes()) {
      const key = laneKey(l.host, l.pe, l.thread);
      const t = map.get(key);
      if (t) t.predicted = l.index;
      else map.set(key, { key, host: l.host, pe: l.pe, thread: l.thread, measured: -1, predicted: l.index });
    }
  const rank = (t: string) => (t === 'main' ? '' : t);
  return [...map.values()].sort((a, b) => cmp(a.host, b.host) || cmp(a.pe, b.pe) || cmp(rank(a.thread), rank(b.thread)));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface DrawStats {
  /** Boxes painted (after merging). */
  boxes: number;
}

/** A CSS hex colour as a pixel of an ImageData viewed as Uint32 (little-endian RGBA), blended over `bg` by `alpha`. */
export function pixel(hex: string, alpha = 1, bg = '#ffffff'): number {
  const c = (h: string, k: number) => parseInt(h.slice(1 + 2 * k, 3 + 2 * k), 16);
  const mix = (k: number) => Math.round(c(hex, k) * alpha + c(bg, k) * (1 - alpha));
  return ((255 << 24) | (mix(2) << 16) | (mix(1) << 8) | mix(0)) >>> 0;
}

/**
 * Paints one lane into a pixel buffer (an ImageData's Uint32 view, `stride` pixels a row):
 * columns [x0, x0 + width), rows [y0, y1), in device pixels. One row is painted span by span
 * and copied down, so the cost is about one step per visible event or pixel, whichever is
 * fewer. Events wide enough to carry a name are pushed to `named` (their numbers).
 */
export function rasterLane(
  px: Uint32Array,
  stride: number,
  c: TraceColumns,
  lane: number,
  w: Window,
  x0: number,
  width: number,
  y0: number,
  y1: number,
  colors: ArrayLike<number>,
  named: number[] | null,
  minNamed: number,
  stats: DrawStats,
): void {
  if (lane < 0 || y1 <= y0 || c.laneLength(lane) === 0) return;
  const t0 = w.t0;
  const scale = width / (w.t1 - t0);
  const [from, to] = c.window(lane, t0, w.t1);
  const order = c.laneOrder(lane);
  const starts = c.laneStarts(lane);
  const kinds = c.laneKinds(lane);
  const maxEnd = c.laneMaxEnd(lane);
  const end = c.end;
  const row = y0 * stride + x0;
  const paint = (color: number, a: number, b: number) => {
    if (a < 0) a = 0;
    if (b > width) b = width;
    if (b - a > 24) px.fill(color, row + a, row + b);
    else for (let p = row + a; p < row + b; p++) px[p] = color;
  };
  let k = from;
  while (k < to) {
    const xs = (starts[k] - t0) * scale;
    const p0 = Math.floor(xs);
    if (k + 1 < to && (starts[k + 1] - t0) * scale < p0 + 1) {
      // Several events start inside this pixel: one box from it to the furthest end among
      // them, then jump straight to the first event of the next pixel.
      const next = c.seek(lane, k + 1, t0 + (p0 + 1) / scale);
      paint(colors[kinds[k]], p0, Math.max(p0 + 1, Math.round((maxEnd[next - 1] - t0) * scale)));
      k = next;
    } else {
      const i = order[k];
      const e = end[i];
      if (e >= t0) {
        const xe = (e - t0) * scale;
        if (xe - xs >= 1) {
          const a = Math.round(xs);
          paint(colors[kinds[k]], a, Math.max(a + 1, Math.round(xe)));
          if (named && xe - xs > minNamed) named.push(i);
        } else paint(colors[kinds[k]], p0, p0 + 1);
      }
      k++;
    }
    stats.boxes++;
  }
  for (let y = y0 + 1; y < y1; y++) px.copyWithin(y * stride + x0, row, row + width);
}
