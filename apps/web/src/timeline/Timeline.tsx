import { useEffect, useImperativeHandle, useMemo, useRef, useState, type Ref } from 'react';
import type { ImplementationGraph, TraceColumns } from '@pipeloom/core';
import { EVENT_KINDS } from './kinds/index.js';
import { lanePairs } from './raster.js';
import { buildTracks, layoutRows, trackKinds, tracksSignature, type Track } from './track.js';
import './tracks/index.js';
import { FlowIndex } from './flows.js';
import { paintFrame, type Layout, type Surface } from './paint.js';
import { fitAll, GUTTER, RULER, TimelineView } from './view.js';
import { pan, zoom, type Window } from './viewport.js';
import { RangeStatsPanel } from './RangeStats.js';
import './timeline.css';

// The canvas timeline: the registered track kinds make the tracks (track.ts), TimelineView
// holds where it looks, paintFrame draws; this component wires them to the DOM. A frame is
// drawn on requestAnimationFrame only when something changed (window, size, data). Input like
// Perfetto: wheel or ctrl+wheel zooms about the pointer, shift+wheel and drag pan, W/S zoom and
// A/D pan while held; dragging on the ruler (or shift+drag) selects a range for statistics.
// The view follows the live edge until the user zooms or pans; "Follow live" returns to it.

export interface TimelineHandle {
  window(): Window;
  setWindow(w: Window): void;
  /** Zooms by `factor` (< 1 zooms in) about a fraction of the width (default: the centre). */
  zoomBy(factor: number, at?: number): void;
  /** Pans by a fraction of the visible span. */
  panBy(fraction: number): void;
  follow(): void;
  /** Selects a time range for statistics (null clears it). */
  selectRange(w: Window | null): void;
  /** Milliseconds, boxes and flow arrows of the last drawn frame. */
  lastFrame(): { ms: number; boxes: number; flows: number };
  /** Draws now if anything changed (the benchmark calls it inside its own frame). */
  flush(): void;
}

export interface TimelineProps {
  measured: TraceColumns;
  predicted?: TraceColumns;
  /** The implementation graph the measured trace ran: flow arrows follow its buffers. */
  graph?: ImplementationGraph | null;
  /** Draw the predicted plan under each measured track. */
  showPredicted?: boolean;
  /** A run is streaming events: keep checking for new data every frame. */
  live?: boolean;
  /** Changes when the measured store gains events (re-renders the lane counts). */
  version?: number;
  ref?: Ref<TimelineHandle>;
}

interface Hover {
  x: number;
  y: number;
  lines: string[];
}

/** What the frame loop reads: the latest props and the derived tracks; everything else is in TimelineView. */
interface Loop {
  measured: TraceColumns;
  predicted?: TraceColumns;
  shown: ReadonlySet<string>;
  live: boolean;
  graph?: ImplementationGraph | null;
  flows: FlowIndex | null;
  sig: string;
  built?: [TraceColumns, TraceColumns | undefined, ImplementationGraph | null | undefined];
  tracks: Track[];
  layout: Layout;
  dirty: boolean;
  drawn: { measured: number; predicted: number };
  raf: number;
  surface: Surface | null;
  last: { ms: number; boxes: number; flows: number };
}

const initialShown = (showPredicted: boolean) =>
  new Set(
    trackKinds()
      .filter((k) => k.toggle && (k.id === 'predicted' ? showPredicted : k.toggle.on))
      .map((k) => k.id),
  );

export function Timeline({ measured, predicted, graph, showPredicted = true, live = false, version = 0, ref }: TimelineProps) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const [following, setFollowing] = useState(true);
  const [shown, setShown] = useState<ReadonlySet<string>>(() => initialShown(showPredicted));
  const [flowsOn, setFlowsOn] = useState(false);
  const [range, setRange] = useState<Window | null>(null);
  const view = useRef<TimelineView>(null as unknown as TimelineView);
  if (!view.current) view.current = new TimelineView(setFollowing);
  const v = view.current;

  const flowIndex = useMemo(() => (graph ? new FlowIndex(measured, graph) : null), [measured, graph]);
  const [flowCount, setFlowCount] = useState(0);
  const loop = useRef<Loop>(null as unknown as Loop);
  if (!loop.current)
    loop.current = {
      measured,
      predicted,
      graph,
      shown,
      live,
      flows: null,
      sig: '',
      tracks: [],
      layout: { rows: [], height: 0, groups: [] },
      dirty: true,
      drawn: { measured: -1, predicted: -1 },
      raf: 0,
      surface: null,
      last: { ms: 0, boxes: 0, flows: 0 },
    };
  const L = loop.current;
  Object.assign(L, { measured, predicted, graph, shown, live, flows: flowsOn ? flowIndex : null });

  // The tracks, rebuilt when the stores, their lanes (a run's first events) or the kinds shown change.
  const ensureTracks = () => {
    const src = { measured: L.measured, predicted: L.predicted, graph: L.graph, shown: L.shown };
    const sig = `${L.measured.laneCount}:${L.predicted?.laneCount ?? 0}:${[...L.shown].join()}:${tracksSignature(src)}`;
    if (sig === L.sig && L.built?.[0] === L.measured && L.built[1] === L.predicted && L.built[2] === L.graph) return;
    L.sig = sig;
    L.built = [L.measured, L.predicted, L.graph];
    L.tracks = buildTracks(src);
    L.layout = layoutRows(L.tracks);
  };

  const fitted = () => fitAll(L.measured, L.predicted, L.shown.has('predicted'));

  const draw = () => {
    const cv = canvas.current;
    if (!cv) return;
    const t = performance.now();
    ensureTracks();
    if (v.follow) v.win = fitted();
    if (!L.surface || L.surface.img.width !== cv.width || L.surface.img.height !== cv.height || L.surface.ctx.canvas !== cv) {
      // A CPU-backed canvas: tracks are painted into its pixels, which then go up in one put.
      const ctx = cv.getContext('2d', { willReadFrequently: true });
      if (!ctx) return;
      const img = ctx.createImageData(cv.width, cv.height);
      L.surface = { ctx, img, px: new Uint32Array(img.data.buffer) };
    }
    const flows = L.flows;
    const painted = paintFrame(L.surface, v, L.layout, { measured: L.measured, flows: flows ? (lanes) => flows.visible(lanes, v.win) : undefined });
    L.drawn = { measured: L.measured.version, predicted: L.predicted?.version ?? -1 };
    L.dirty = false;
    if (painted.flows !== L.last.flows) setFlowCount(painted.flows);
    L.last = { ms: performance.now() - t, ...painted };
  };

  const stale = () => L.dirty || L.measured.version !== L.drawn.measured || (L.predicted?.version ?? -1) !== L.drawn.predicted;
  const schedule = () => {
    if (L.raf) return;
    L.raf = requestAnimationFrame(() => {
      L.raf = 0;
      // Held keys move the window every frame, in proportion to its span.
      if (v.stepKeys(v.follow ? fitted() : v.win)) L.dirty = true;
      if (stale()) draw();
      if (v.keys.size || L.live) schedule();
    });
  };
  const redraw = () => {
    L.dirty = true;
    schedule();
  };
  const moveTo = (w: Window) => {
    v.moveTo(w);
    redraw();
  };
  const follow = () => {
    v.setFollow(true);
    v.win = fitted();
    redraw();
  };
  const select = (w: Window | null) => {
    v.range = w && w.t1 > w.t0 ? w : null;
    setRange(v.range);
    redraw();
  };

  // New stores (a new run): follow its live edge again, and drop a range of the old one.
  useEffect(() => {
    v.range = null;
    setRange(null);
    follow();
  }, [measured, predicted]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(redraw, [shown, flowsOn, live, version, graph]); // eslint-disable-line react-hooks/exhaustive-deps

  // Size the backing store in device pixels.
  useEffect(() => {
    const el = box.current;
    const cv = canvas.current;
    if (!el || !cv) return;
    const resize = () => {
      const r = el.getBoundingClientRect();
      v.dpr = window.devicePixelRatio || 1;
      v.width = Math.max(1, Math.floor(r.width));
      v.height = Math.max(1, Math.floor(r.height));
      cv.width = Math.round(v.width * v.dpr);
      cv.height = Math.round(v.height * v.dpr);
      cv.style.width = `${v.width}px`;
      cv.style.height = `${v.height}px`;
      L.dirty = true;
      draw();
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
      cancelAnimationFrame(L.raf);
      L.raf = 0;
    };
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  useImperativeHandle(
    ref,
    () => ({
      window: () => v.win,
      setWindow: moveTo,
      zoomBy: (factor, at = 0.5) => moveTo(zoom(v.win, factor, v.win.t0 + at * (v.win.t1 - v.win.t0))),
      panBy: (fraction) => moveTo(pan(v.win, fraction * (v.win.t1 - v.win.t0))),
      follow,
      selectRange: select,
      lastFrame: () => L.last,
      flush: () => {
        if (stale()) draw();
      },
    }),
    [], // eslint-disable-line react-hooks/exhaustive-deps
  );

  // Wheel must be non-passive to keep the page from scrolling.
  useEffect(() => {
    const cv = canvas.current;
    if (!cv) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = cv.getBoundingClientRect();
      const px = e.deltaMode === 1 ? 16 : 1;
      v.wheel(e.clientX - r.left, e.deltaX * px, e.deltaY * px, e.shiftKey, e.ctrlKey);
      redraw();
    };
    cv.addEventListener('wheel', onWheel, { passive: false });
    return () => cv.removeEventListener('wheel', onWheel);
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  const drag = useRef<{ x: number; y: number; win: Window; scrollY: number; range: boolean } | null>(null);

  const hoverAt = (x: number, y: number) => {
    if (x < GUTTER || y < RULER) return setHover(null);
    ensureTracks();
    const yy = y - RULER + v.scrollY;
    const row = L.layout.rows.find((r) => yy >= r.top - 1 && yy < r.top + r.track.height + 1);
    if (!row) return setHover(null);
    const scale = v.trackWidth() / (v.win.t1 - v.win.t0);
    const lines = row.track.hit(v.timeAt(x), 3 / scale);
    setHover(lines ? { x, y, lines } : null);
  };

  const pairs = lanePairs(measured, predicted);
  const withEvents = pairs.filter((t) => t.measured >= 0).length;
  const toggles = trackKinds().filter((k) => k.toggle && (k.id !== 'predicted' || predicted));

  return (
    <div className="timeline">
      <div className="timeline-bar">
        {EVENT_KINDS.map((k) => (
          <span key={k.id} className="timeline-key">
            <span className="swatch" style={{ background: k.color }} /> {k.label}
          </span>
        ))}
        {toggles.map((k) => (
          <label key={k.id} className="timeline-key" title={k.toggle!.title}>
            <input
              type="checkbox"
              data-testid={`timeline-${k.id}`}
              checked={shown.has(k.id)}
              onChange={(e) => {
                const next = new Set(shown);
                if (e.target.checked) next.add(k.id);
                else next.delete(k.id);
                setShown(next);
              }}
            />
            <span className="swatch" style={{ background: k.toggle!.swatch, opacity: k.id === 'predicted' ? 0.45 : 1 }} /> {k.toggle!.label}
          </label>
        ))}
        {graph && (
          <label className="timeline-key" title="Arrows from each visible transfer to the firing that reads its data (same iteration)">
            <input type="checkbox" data-testid="timeline-flows" checked={flowsOn} onChange={(e) => setFlowsOn(e.target.checked)} /> flows
          </label>
        )}
        <span className="spacer" />
        <span className="muted" data-testid="timeline-lanes" data-lanes={pairs.length} data-lanes-with-events={withEvents}>
          {pairs.length} lanes ({withEvents} measured) · {measured.length.toLocaleString()} events
        </span>
        <button data-testid="timeline-follow" disabled={following} onClick={follow} title="Fit the whole trace and follow new events">
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
          data-flows={flowsOn ? flowCount : 0}
          aria-label="Timeline: wheel or W/S to zoom, drag or A/D to pan, drag on the ruler or shift+drag to select a range"
          onKeyDown={(e) => {
            if (e.key === 'Escape') return select(null);
            const k = e.key.toLowerCase();
            if (!'wasd'.includes(k) || e.ctrlKey || e.metaKey || e.altKey) return;
            e.preventDefault();
            v.keys.add(k);
            schedule();
          }}
          onKeyUp={(e) => v.keys.delete(e.key.toLowerCase())}
          onBlur={() => v.keys.clear()}
          onPointerDown={(e) => {
            (e.target as HTMLElement).setPointerCapture?.(e.pointerId);
            const r = (e.target as HTMLElement).getBoundingClientRect();
            const y = e.clientY - r.top;
            const x = e.clientX - r.left;
            drag.current = { x: e.clientX, y: e.clientY, win: v.win, scrollY: v.scrollY, range: x >= GUTTER && (e.shiftKey || y < RULER) };
          }}
          onPointerUp={() => {
            const d = drag.current;
            drag.current = null;
            if (d?.range) select(v.range);
          }}
          onPointerLeave={() => {
            v.pointer = -1;
            setHover(null);
          }}
          onPointerMove={(e) => {
            const r = (e.target as HTMLElement).getBoundingClientRect();
            const x = e.clientX - r.left;
            v.pointer = x >= GUTTER ? (x - GUTTER) / v.trackWidth() : -1;
            const d = drag.current;
            if (d && (Math.abs(e.clientX - d.x) > 2 || Math.abs(e.clientY - d.y) > 2)) {
              setHover(null);
              if (d.range) {
                const a = v.timeAt(d.x - r.left);
                const b = v.timeAt(x);
                v.range = { t0: Math.min(a, b), t1: Math.max(a, b) };
                return redraw();
              }
              v.scrollY = d.scrollY - (e.clientY - d.y);
              return moveTo(pan(d.win, (-(e.clientX - d.x) / v.trackWidth()) * (d.win.t1 - d.win.t0)));
            }
            hoverAt(x, e.clientY - r.top);
          }}
        />
        {hover && (
          <div className="timeline-tip" data-testid="timeline-tooltip" style={{ left: Math.min(hover.x + 12, v.width - 240), top: hover.y + 14 }}>
            {hover.lines.map((l, i) => (
              <div key={i} className={i === 0 ? 'tip-head' : undefined}>
                {l}
              </div>
            ))}
          </div>
        )}
      </div>
      {range && <RangeStatsPanel measured={measured} range={range} version={version} onClose={() => select(null)} />}
    </div>
  );
}
