import type { TraceColumns } from '@pipeloom/core/trace/columns';
import type { Window } from './viewport.js';

// Tracks: one per host / PE / thread, like the paper's Fig 23. A track draws its lane from a
// column store for a time window: a binary search finds the first visible event, and runs of
// events narrower than a pixel are merged into one box by jumping (binary search again) to
// the first event of the next pixel, so a frame costs about one step per pixel, not per event.

export const KIND_COLORS = ['#3b82f6', '#f59e0b', '#cbd5e1', '#ef4444'] as const; // fire, transfer, wait, barrier
export const KIND_LABELS = ['fire', 'transfer', 'wait', 'barrier'] as const;

export interface Track {
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
export function tracks(measured: TraceColumns, predicted?: TraceColumns): Track[] {
  const map = new Map<string, Track>();
  for (const l of measured.lanes()) map.set(laneKey(l.host, l.pe, l.thread), { key: laneKey(l.host, l.pe, l.thread), host: l.host, pe: l.pe, thread: l.thread, measured: l.index, predicted: -1 });
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
  /** Boxes drawn (after merging). */
  boxes: number;
}

/**
 * Draws one lane into the band [y, y + h) of a canvas whose x runs from `x0` to `x0 + width`
 * (device pixels). Names are written into boxes wide enough to hold them.
 */
export function drawLane(ctx: CanvasRenderingContext2D, c: TraceColumns, lane: number, w: Window, x0: number, width: number, y: number, h: number, alpha: number, labels: boolean, stats: DrawStats): void {
  if (lane < 0 || c.laneLength(lane) === 0) return;
  const scale = width / (w.t1 - w.t0);
  const [from, to] = c.window(lane, w.t0, w.t1);
  const order = c.laneOrder(lane);
  const maxEnd = c.laneMaxEnd(lane);
  const { start, end, kind } = c;
  const paths = [new Path2D(), new Path2D(), new Path2D(), new Path2D()];
  const named: number[] = [];
  let k = from;
  while (k < to) {
    const i = order[k];
    const s = start[i];
    const e = end[i];
    if (e < w.t0) {
      k++;
      continue;
    }
    const xs = Math.max(-1, (s - w.t0) * scale);
    const xe = Math.min(width + 1, (e - w.t0) * scale);
    if (xe - xs >= 1) {
      paths[kind[i]].rect(x0 + xs, y, xe - xs, h);
      if (labels && xe - xs > 36) named.push(i);
      k++;
    } else {
      // Everything starting inside this pixel becomes one box reaching the furthest end.
      const px = Math.floor(xs);
      const next = c.seek(lane, k + 1, w.t0 + (px + 1) / scale);
      const far = Math.min(width + 1, (maxEnd[next - 1] - w.t0) * scale);
      paths[kind[i]].rect(x0 + px, y, Math.max(1, far - px), h);
      k = next;
    }
    stats.boxes++;
  }
  ctx.globalAlpha = alpha;
  for (let m = 0; m < 4; m++) {
    ctx.fillStyle = KIND_COLORS[m];
    ctx.fill(paths[m]);
  }
  ctx.globalAlpha = 1;
  if (named.length) {
    ctx.save();
    ctx.fillStyle = '#0f172a';
    ctx.textBaseline = 'middle';
    for (const i of named) {
      const xs = Math.max(0, (start[i] - w.t0) * scale);
      const xe = Math.min(width, (end[i] - w.t0) * scale);
      ctx.save();
      ctx.beginPath();
      ctx.rect(x0 + xs, y, xe - xs, h);
      ctx.clip();
      ctx.fillText(c.names[c.name[i]], x0 + xs + 3, y + h / 2);
      ctx.restore();
    }
    ctx.restore();
  }
}
