import type { TraceColumns } from '@pipeloom/core';
import { pixel } from './raster.js';
import { GUTTER, RULER, type TimelineView } from './view.js';
import { formatDuration, formatTime, ticks } from './viewport.js';
import type { Flow } from './flows.js';
import type { Frame, Row } from './track.js';

// Paints one frame: stripes and host separators, every visible track's band into the canvas's
// pixels (one putImageData), then the text over them: slice names, gutter labels, flow arrows,
// the selected range and the ruler.

const WHITE = pixel('#ffffff');
const STRIPE = pixel('#f8fafc');
const SEPARATOR = pixel('#94a3b8');

export interface Surface {
  ctx: CanvasRenderingContext2D;
  img: ImageData;
  px: Uint32Array;
}

export interface Layout {
  rows: Row[];
  height: number;
  groups: { top: number; height: number; host: string }[];
}

export interface Painted {
  boxes: number;
  flows: number;
}

export function paintFrame(
  s: Surface,
  view: TimelineView,
  layout: Layout,
  extra: { measured: TraceColumns; flows?: (visibleLanes: number[]) => Flow[] },
): Painted {
  const { ctx, img, px } = s;
  const { width, height, dpr, win } = view;
  const dw = img.width;
  const dh = img.height;
  px.fill(WHITE);
  const top = Math.round(RULER * dpr);
  const gx = Math.round(GUTTER * dpr);
  const tw = view.trackWidth();
  view.clampScroll(layout.height);
  const yOf = (contentY: number) => RULER + contentY - view.scrollY;
  const clampY = (y: number) => Math.min(dh, Math.max(top, Math.round(y * dpr)));
  const visible = (t: number, h: number) => yOf(t + h) > RULER && yOf(t) < height;

  for (let g = 0; g < layout.groups.length; g++) {
    const gr = layout.groups[g];
    if (!visible(gr.top, gr.height)) continue;
    const y = yOf(gr.top);
    if (g % 2 === 0) px.fill(STRIPE, clampY(y) * dw, clampY(y + gr.height) * dw);
    if (g > 0 && layout.groups[g - 1].host !== gr.host && clampY(y) > top) px.fill(SEPARATOR, clampY(y) * dw, (clampY(y) + 1) * dw);
  }
  const frame: Frame = { px, stride: dw, x0: gx, width: dw - gx, dpr, win, labels: [], boxes: 0 };
  const laneY = new Map<number, number>();
  const shown: number[] = [];
  for (const r of layout.rows) {
    if (r.track.measuredLane >= 0) laneY.set(r.track.measuredLane, yOf(r.top) + r.track.height / 2);
    if (!visible(r.top, r.track.height)) continue;
    const y = yOf(r.top);
    if (r.track.measuredLane >= 0) shown.push(r.track.measuredLane);
    r.track.paint(frame, clampY(y), clampY(y + r.track.height), y + r.track.height / 2);
  }
  ctx.putImageData(img, 0, 0);

  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, RULER, width, height - RULER);
  ctx.clip();
  // Names of wide slices; overlapping events (transfers in flight together) would write over each other's.
  ctx.fillStyle = '#0f172a';
  let lastY = NaN;
  let lastEnd = -Infinity;
  for (const l of frame.labels) {
    const xs = Math.max(0, l.x0);
    const xe = Math.min(tw, l.x1);
    if (l.y === lastY && xs < lastEnd) continue;
    const fits = Math.floor((xe - xs - 6) / 6.2);
    if (fits < 2) continue;
    ctx.fillText(fits >= l.text.length ? l.text : `${l.text.slice(0, fits - 1)}…`, GUTTER + xs + 3, l.y);
    lastY = l.y;
    lastEnd = xe;
  }

  // Flow arrows: from a transfer's end to the start of the firing it feeds.
  let flows = 0;
  if (extra.flows) {
    const m = extra.measured;
    const scale = tw / (win.t1 - win.t0);
    ctx.strokeStyle = 'rgba(15,23,42,0.55)';
    ctx.fillStyle = 'rgba(15,23,42,0.55)';
    ctx.lineWidth = 1;
    for (const f of extra.flows(shown)) {
      const y0 = laneY.get(m.lane[f.from]);
      const y1 = laneY.get(m.lane[f.to]);
      if (y0 === undefined || y1 === undefined) continue;
      const x0 = GUTTER + (m.end[f.from] - win.t0) * scale;
      const x1 = GUTTER + (m.start[f.to] - win.t0) * scale;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + 20, y0, x1 - 20, y1, x1, y1);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 5, y1 - 3);
      ctx.lineTo(x1 - 5, y1 + 3);
      ctx.fill();
      flows++;
    }
  }

  // The selected range, shaded over the tracks.
  if (view.range) {
    const scale = tw / (win.t1 - win.t0);
    const a = Math.max(GUTTER, GUTTER + (view.range.t0 - win.t0) * scale);
    const b = Math.min(width, GUTTER + (view.range.t1 - win.t0) * scale);
    if (b > a) {
      ctx.fillStyle = 'rgba(37,99,235,0.12)';
      ctx.fillRect(a, RULER, b - a, height - RULER);
      ctx.fillStyle = 'rgba(37,99,235,0.7)';
      ctx.fillRect(a, RULER, 1, height - RULER);
      ctx.fillRect(b - 1, RULER, 1, height - RULER);
    }
  }

  // The gutter: each track's label over a white background.
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, RULER, GUTTER - 1, height - RULER);
  for (let g = 0; g < layout.groups.length; g++) {
    const gr = layout.groups[g];
    if (g % 2 === 0 && visible(gr.top, gr.height)) {
      ctx.fillStyle = '#f8fafc';
      ctx.fillRect(0, yOf(gr.top), GUTTER - 1, gr.height);
    }
  }
  ctx.fillStyle = '#1f2430';
  for (const r of layout.rows) {
    if (!r.track.label || !visible(r.top, r.track.height)) continue;
    const label = r.track.label;
    ctx.fillText(label.length > 33 ? `${label.slice(0, 32)}…` : label, 6, yOf(r.top) + r.track.height / 2);
  }
  ctx.restore();
  ctx.fillStyle = '#e3e6eb';
  ctx.fillRect(GUTTER - 1, RULER, 1, height - RULER);

  // Ruler.
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, RULER);
  ctx.fillStyle = '#cdd2da';
  ctx.fillRect(0, RULER - 1, width, 1);
  const scale = tw / (win.t1 - win.t0);
  const { step, times } = ticks(win, tw);
  for (const tt of times) {
    const x = GUTTER + (tt - win.t0) * scale;
    ctx.fillStyle = '#cdd2da';
    ctx.fillRect(x, RULER - 7, 1, 7);
    ctx.fillStyle = 'rgba(100,116,139,0.12)';
    ctx.fillRect(x, RULER, 1, height - RULER);
    ctx.fillStyle = '#6b7280';
    ctx.fillText(formatTime(tt, step), x + 3, 9);
  }
  ctx.fillStyle = '#6b7280';
  ctx.fillText(view.follow ? 'following live' : `${formatDuration(win.t1 - win.t0)} visible`, 6, 11);
  return { boxes: frame.boxes, flows };
}
