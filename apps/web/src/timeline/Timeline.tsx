import { useEffect, useImperativeHandle, useRef, useState, type Ref } from 'react';
import type { TraceColumns } from '@pipeloom/core';
import { KIND_COLORS, KIND_LABELS, pixel, rasterLane, tracks, type DrawStats, type Track } from './tracks.js';
import { fit, formatDuration, formatTime, pan, ticks, zoom, type Window } from './viewport.js';
import './timeline.css';

// The canvas timeline. Each track draws itself from the column stores for the visible window;
// a frame is drawn on requestAnimationFrame only when something changed (window, size, data).
// Input like Perfetto: wheel or ctrl+wheel zooms about the pointer, shift+wheel and drag
// pan, W/S zoom and A/D pan while held. The view follows the live edge until the user zooms
// or pans; "Follow live" returns to it.

export interface TimelineHandle {
  window(): Window;
  setWindow(w: Window): void;
  /** Zooms by `factor` (< 1 zooms in) about a fraction of the width (default: the centre). */
  zoomBy(factor: number, at?: number): void;
  /** Pans by a fraction of the visible span. */
  panBy(fraction: number): void;
  follow(): void;
  /** Milliseconds and boxes of the last drawn frame. */
  lastFrame(): { ms: number; boxes: number };
  /** Draws now if anything changed (the benchmark calls it inside its own frame). */
  flush(): void;
}

export interface TimelineProps {
  measured: TraceColumns;
  predicted?: TraceColumns;
  /** Draw the predicted plan under each measured track. */
  showPredicted?: boolean;
  /** A run is streaming events: keep checking for new data every frame. */
  live?: boolean;
  /** Changes when the measured store gains events (re-renders the lane counts). */
  version?: number;
  ref?: Ref<TimelineHandle>;
}

const RULER = 22;
const GUTTER = 196;
const ROW = 16;
const PRED = 7;
const GAP = 4;
const WHITE = pixel('#ffffff');
const STRIPE = pixel('#f8fafc');
const SEPARATOR = pixel('#94a3b8');
const MEASURED = KIND_COLORS.map((c) => pixel(c));
const PREDICTED = KIND_COLORS.map((c) => pixel(c, 0.45));

interface Hover {
  x: number;
  y: number;
  lines: string[];
}

export function Timeline({ measured, predicted, showPredicted: initialShow = true, live = false, version = 0, ref }: TimelineProps) {
  const [showPredicted, setShowPredicted] = useState(initialShow);
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const [following, setFollowing] = useState(true);
  const s = useRef({
    win: { t0: 0, t1: 1000 } as Window,
    follow: true,
    dirty: true,
    drawnVersion: -1,
    predictedVersion: -1,
    scrollY: 0,
    width: 0,
    height: 0,
    dpr: 1,
    raf: 0,
    keys: new Set<string>(),
    /** Pointer position over the tracks as a fraction of their width (-1: elsewhere). */
    pointer: -1,
    tracks: [] as Track[],
    laneSig: '',
    last: { ms: 0, boxes: 0 },
    img: null as ImageData | null,
    ctx: null as CanvasRenderingContext2D | null,
    ctxFor: null as HTMLCanvasElement | null,
    px: null as Uint32Array | null,
    props: { measured, predicted, showPredicted, live },
    draw: () => {},
    schedule: () => {},
  }).current;
  s.props = { measured, predicted, showPredicted, live };

  const rowHeight = () => ROW + (s.props.showPredicted && s.props.predicted ? PRED + 1 : 0) + GAP;
  const trackWidth = () => Math.max(1, s.width - GUTTER);
  const unfollow = () => {
    if (s.follow) {
      s.follow = false;
      setFollowing(false);
    }
  };
  const setWin = (w: Window) => {
    s.win = w;
    s.dirty = true;
    s.schedule();
  };

  // Fit everything (measured and predicted) while following.
  const followWindow = (): Window => {
    const { measured: m, predicted: p } = s.props;
    const min = Math.min(m.minStart, p?.minStart ?? Infinity);
    const max = Math.max(m.maxEnd, s.props.showPredicted && p && !m.length ? p.maxEnd : -Infinity);
    return fit(min, max);
  };

  s.draw = () => {
    const cv = canvas.current;
    if (!cv) return;
    const t = performance.now();
    const { measured: m, predicted: p, showPredicted: sp } = s.props;
    const sig = `${m.laneCount}:${p?.laneCount ?? 0}:${sp}`;
    if (sig !== s.laneSig) {
      s.laneSig = sig;
      s.tracks = tracks(m, sp ? p : undefined);
    }
    if (s.follow) s.win = followWindow();
    // A CPU-backed canvas: the tracks are painted into its pixels, which then go up in one put.
    if (s.ctxFor !== cv) {
      s.ctxFor = cv;
      s.ctx = cv.getContext('2d', { willReadFrequently: true });
    }
    const ctx = s.ctx;
    if (!ctx) return;
    const { width, height, dpr, win } = s;
    const dw = cv.width;
    const dh = cv.height;
    if (!s.img || s.img.width !== dw || s.img.height !== dh) {
      s.img = ctx.createImageData(dw, dh);
      s.px = new Uint32Array(s.img.data.buffer);
    }
    const px = s.px!;
    px.fill(WHITE);
    const top = Math.round(RULER * dpr);
    const gx = Math.round(GUTTER * dpr);
    const tw = trackWidth();
    const rh = rowHeight();
    const maxScroll = Math.max(0, s.tracks.length * rh - (height - RULER));
    s.scrollY = Math.min(Math.max(0, s.scrollY), maxScroll);
    const stats: DrawStats = { boxes: 0 };
    const clampY = (y: number) => Math.min(dh, Math.max(top, Math.round(y * dpr)));
    const first = Math.floor(s.scrollY / rh);
    const last = Math.min(s.tracks.length, Math.ceil((s.scrollY + height - RULER) / rh));
    const named: number[] = [];
    const namedY: number[] = [];
    for (let r = first; r < last; r++) {
      const tr = s.tracks[r];
      const y = RULER + r * rh - s.scrollY;
      if (r % 2 === 0) px.fill(STRIPE, clampY(y) * dw, clampY(y + rh) * dw);
      if (r > 0 && s.tracks[r - 1].host !== tr.host && clampY(y) > top) px.fill(SEPARATOR, clampY(y) * dw, (clampY(y) + 1) * dw);
      const my = y + GAP / 2;
      const before = named.length;
      rasterLane(px, dw, m, tr.measured, win, gx, dw - gx, clampY(my), clampY(my + ROW), MEASURED, named, 40 * dpr, stats);
      for (let k = before; k < named.length; k++) namedY.push(my + ROW / 2);
      if (sp && p) rasterLane(px, dw, p, tr.predicted, win, gx, dw - gx, clampY(my + ROW + 1), clampY(my + ROW + 1 + PRED), PREDICTED, null, 0, stats);
    }
    ctx.putImageData(s.img, 0, 0);

    // Labels over the pixels.
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER, width, height - RULER);
    ctx.clip();
    ctx.fillStyle = '#0f172a';
    const scaleCss = tw / (win.t1 - win.t0);
    // Overlapping events (transfers in flight together) would write over each other's names.
    let lastY = NaN;
    let lastEnd = -Infinity;
    for (let k = 0; k < named.length; k++) {
      const i = named[k];
      const xs = Math.max(0, (m.start[i] - win.t0) * scaleCss);
      const xe = Math.min(tw, (m.end[i] - win.t0) * scaleCss);
      if (namedY[k] === lastY && xs < lastEnd) continue;
      const name = m.names[m.name[i]];
      const fits = Math.floor((xe - xs - 6) / 6.2);
      if (fits < 2) continue;
      ctx.fillText(fits >= name.length ? name : `${name.slice(0, fits - 1)}…`, GUTTER + xs + 3, namedY[k]);
      lastY = namedY[k];
      lastEnd = xe;
    }
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, RULER, GUTTER - 1, height - RULER);
    for (let r = first; r < last; r++) {
      const tr = s.tracks[r];
      const y = RULER + r * rh - s.scrollY + GAP / 2;
      if (r % 2 === 0) {
        ctx.fillStyle = '#f8fafc';
        ctx.fillRect(0, y - GAP / 2, GUTTER - 1, rh);
      }
      ctx.fillStyle = '#1f2430';
      const label = `${tr.host} · ${tr.pe} · ${tr.thread}`;
      ctx.fillText(label.length > 33 ? `${label.slice(0, 32)}…` : label, 6, y + ROW / 2);
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
    ctx.fillText(s.follow ? 'following live' : `${formatDuration(win.t1 - win.t0)} visible`, 6, 11);

    s.drawnVersion = m.version;
    s.predictedVersion = p?.version ?? -1;
    s.dirty = false;
    s.last = { ms: performance.now() - t, boxes: stats.boxes };
  };

  const stale = () => s.dirty || s.props.measured.version !== s.drawnVersion || (s.props.predicted?.version ?? -1) !== s.predictedVersion;

  s.schedule = () => {
    if (s.raf) return;
    s.raf = requestAnimationFrame(() => {
      s.raf = 0;
      // Held keys move the window every frame, in proportion to its span.
      if (s.keys.size) {
        const span = s.win.t1 - s.win.t0;
        let w = s.follow ? followWindow() : s.win;
        // Zoom about the pointer when it is over the tracks, else about the centre.
        const at = s.pointer >= 0 ? w.t0 + s.pointer * (w.t1 - w.t0) : (w.t0 + w.t1) / 2;
        if (s.keys.has('w')) w = zoom(w, 0.92, at);
        if (s.keys.has('s')) w = zoom(w, 1 / 0.92, at);
        if (s.keys.has('a')) w = pan(w, -span * 0.02);
        if (s.keys.has('d')) w = pan(w, span * 0.02);
        unfollow();
        s.win = w;
        s.dirty = true;
      }
      if (stale()) s.draw();
      if (s.keys.size || s.props.live) s.schedule();
    });
  };

  // New stores (a new run): follow its live edge again.
  useEffect(() => {
    s.follow = true;
    setFollowing(true);
    s.dirty = true;
    s.schedule();
  }, [measured, predicted, s]);

  useEffect(() => {
    s.dirty = true;
    s.schedule();
  }, [showPredicted, live, version, s]);

  // Size the backing store in device pixels.
  useEffect(() => {
    const el = box.current;
    const cv = canvas.current;
    if (!el || !cv) return;
    const resize = () => {
      const r = el.getBoundingClientRect();
      s.dpr = window.devicePixelRatio || 1;
      s.width = Math.max(1, Math.floor(r.width));
      s.height = Math.max(1, Math.floor(r.height));
      cv.width = Math.round(s.width * s.dpr);
      cv.height = Math.round(s.height * s.dpr);
      cv.style.width = `${s.width}px`;
      cv.style.height = `${s.height}px`;
      s.dirty = true;
      s.draw();
    };
    // jsdom (component tests) has no ResizeObserver: size once.
    const ro = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(resize);
    ro?.observe(el);
    resize();
    // Moving the window to a screen of another pixel ratio resizes the backing store too.
    let dprQuery: MediaQueryList | null = null;
    const watchDpr = () => {
      dprQuery?.removeEventListener('change', onDpr);
      dprQuery = typeof matchMedia === 'function' ? matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`) : null;
      dprQuery?.addEventListener('change', onDpr);
    };
    const onDpr = () => {
      resize();
      watchDpr();
    };
    watchDpr();
    return () => {
      dprQuery?.removeEventListener('change', onDpr);
      ro?.disconnect();
      cancelAnimationFrame(s.raf);
      s.raf = 0;
    };
  }, [s]);

  useImperativeHandle(
    ref,
    () => ({
      window: () => s.win,
      setWindow: (w) => {
        unfollow();
        setWin(w);
      },
      zoomBy: (factor, at = 0.5) => {
        unfollow();
        setWin(zoom(s.win, factor, s.win.t0 + at * (s.win.t1 - s.win.t0)));
      },
      panBy: (fraction) => {
        unfollow();
        setWin(pan(s.win, fraction * (s.win.t1 - s.win.t0)));
      },
      follow: () => {
        s.follow = true;
        setFollowing(true);
        setWin(followWindow());
      },
      lastFrame: () => s.last,
      flush: () => {
        if (stale()) s.draw();
      },
    }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [s],
  );

  // Wheel must be non-passive to keep the page from scrolling.
  useEffect(() => {
    const cv = canvas.current;
    if (!cv) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = cv.getBoundingClientRect();
      const x = e.clientX - r.left;
      const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      const dx = e.deltaMode === 1 ? e.deltaX * 16 : e.deltaX;
      if (x < GUTTER && !e.ctrlKey) {
        s.scrollY += dy;
        s.dirty = true;
        s.schedule();
        return;
      }
      unfollow();
      const span = s.win.t1 - s.win.t0;
      if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
        setWin(pan(s.win, ((e.shiftKey ? dy : dx) / trackWidth()) * span));
      } else {
        const anchor = s.win.t0 + ((x - GUTTER) / trackWidth()) * span;
        setWin(zoom(s.win, Math.exp(dy * 0.002), anchor));
      }
    };
    cv.addEventListener('wheel', onWheel, { passive: false });
    return () => cv.removeEventListener('wheel', onWheel);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [s]);

  const drag = useRef<{ x: number; y: number; win: Window; scrollY: number } | null>(null);

  const hoverAt = (x: number, y: number) => {
    if (x < GUTTER || y < RULER) return setHover(null);
    const rh = rowHeight();
    const yy = y - RULER + s.scrollY;
    const tr = s.tracks[Math.floor(yy / rh)];
    if (!tr) return setHover(null);
    const within = yy - Math.floor(yy / rh) * rh - GAP / 2;
    const isPred = within > ROW && s.props.showPredicted;
    const store = isPred ? s.props.predicted : s.props.measured;
    const lane = isPred ? tr.predicted : tr.measured;
    if (!store || lane < 0) return setHover(null);
    const scale = trackWidth() / (s.win.t1 - s.win.t0);
    const t = s.win.t0 + (x - GUTTER) / scale;
    const i = store.hit(lane, t, 3 / scale);
    if (i < 0) return setHover(null);
    const e = store.event(i);
    const lines = [
      `${isPred ? 'predicted ' : ''}${e.kind} ${e.name}`,
      `${e.host} · ${e.pe} · ${e.thread}`,
      `iteration ${e.iteration} · cycle ${e.cycle}`,
      `${formatDuration(e.end - e.start)} at ${formatTime(e.start, 1)}`,
    ];
    if (e.bytes) lines.push(`${e.bytes.toLocaleString()} bytes`);
    setHover({ x, y, lines });
  };

  const counts = countLanes(tracks(measured, predicted));

  return (
    <div className="timeline">
      <div className="timeline-bar">
        {KIND_LABELS.map((k, i) => (
          <span key={k} className="timeline-key">
            <span className="swatch" style={{ background: KIND_COLORS[i] }} /> {k}
          </span>
        ))}
        {predicted && (
          <label className="timeline-key" title="Draw the predicted plan as a thin, faded track under each lane">
            <input type="checkbox" data-testid="timeline-predicted" checked={showPredicted} onChange={(e) => setShowPredicted(e.target.checked)} />
            <span className="swatch" style={{ background: KIND_COLORS[0], opacity: 0.45 }} /> predicted
          </label>
        )}
        <span className="spacer" />
        <span className="muted" data-testid="timeline-lanes" data-lanes={counts.lanes} data-lanes-with-events={counts.withEvents}>
          {counts.lanes} lanes ({counts.withEvents} measured) · {measured.length.toLocaleString()} events
        </span>
        <button data-testid="timeline-follow" disabled={following} onClick={() => (s.follow = true, setFollowing(true), setWin(followWindow()))} title="Fit the whole trace and follow new events">
          Follow live
        </button>
      </div>
      <div className="timeline-box" ref={box}>
        <canvas
          ref={canvas}
          tabIndex={0}
          data-testid="timeline-canvas"
          data-events={measured.length}
          data-version={version}
          aria-label="Timeline: wheel or W/S to zoom, drag or A/D to pan"
          onKeyDown={(e) => {
            const k = e.key.toLowerCase();
            if (!'wasd'.includes(k) || e.ctrlKey || e.metaKey || e.altKey) return;
            e.preventDefault();
            s.keys.add(k);
            s.schedule();
          }}
          onKeyUp={(e) => s.keys.delete(e.key.toLowerCase())}
          onBlur={() => s.keys.clear()}
          onPointerDown={(e) => {
            (e.target as HTMLElement).setPointerCapture?.(e.pointerId);
            drag.current = { x: e.clientX, y: e.clientY, win: s.win, scrollY: s.scrollY };
          }}
          onPointerUp={() => (drag.current = null)}
          onPointerLeave={() => {
            s.pointer = -1;
            setHover(null);
          }}
          onPointerMove={(e) => {
            const r = (e.target as HTMLElement).getBoundingClientRect();
            const px = e.clientX - r.left;
            s.pointer = px >= GUTTER ? (px - GUTTER) / trackWidth() : -1;
            const d = drag.current;
            if (d && (Math.abs(e.clientX - d.x) > 2 || Math.abs(e.clientY - d.y) > 2)) {
              unfollow();
              const span = d.win.t1 - d.win.t0;
              s.scrollY = d.scrollY - (e.clientY - d.y);
              setWin(pan(d.win, (-(e.clientX - d.x) / trackWidth()) * span));
              setHover(null);
              return;
            }
            hoverAt(e.clientX - r.left, e.clientY - r.top);
          }}
        />
        {hover && (
          <div className="timeline-tip" data-testid="timeline-tooltip" style={{ left: Math.min(hover.x + 12, s.width - 240), top: hover.y + 14 }}>
            {hover.lines.map((l, i) => (
              <div key={i} className={i === 0 ? 'tip-head' : undefined}>
                {l}
              </div>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}

/** Tracks drawn (measured or predicted) and how many of them hold measured events. */
function countLanes(all: Track[]): { lanes: number; withEvents: number } {
  return { lanes: all.length, withEvents: all.filter((t) => t.measured >= 0).length };
}
