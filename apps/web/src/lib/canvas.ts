import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useReactFlow, type NodeChange } from '@xyflow/react';

// React Flow measures nodes and reports sizes as changes; the document does not store them,
// so each canvas keeps the measurements beside it and hands them back on every render.
export function useMeasured() {
  const sizes = useRef(new Map<string, { width: number; height: number }>());
  const [tick, setTick] = useState(0);
  const take = useCallback((changes: NodeChange[]) => {
    let changed = false;
    for (const c of changes) {
      if (c.type === 'dimensions' && c.dimensions) {
        sizes.current.set(c.id, c.dimensions);
        changed = true;
      }
    }
    if (changed) setTick((t) => t + 1);
  }, []);
  return { sizes: sizes.current, tick, take };
}

let dragSerial = 0;
/** A fresh coalescing key for one drag gesture. */
export const nextDragKey = (what: string) => `${what}:drag:${++dragSerial}`;

/** The id of the element React Flow just selected, if any. */
export function pickedId(changes: readonly { type: string }[]): string | undefined {
  for (const c of changes) if (c.type === 'select' && (c as { selected?: boolean }).selected) return (c as unknown as { id: string }).id;
  return undefined;
}

/** Ids React Flow asks to remove (Delete key). */
export function removedIds(changes: readonly { type: string }[]): string[] {
  return changes.filter((c) => c.type === 'remove').map((c) => (c as unknown as { id: string }).id);
}

export interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The opening viewport for a canvas: the whole graph when it fits at a readable zoom;
 * otherwise readable zoom anchored at the graph's left edge (where data enters), so a long
 * pipeline opens at its source instead of as an unreadable strip.
 */
/**
 * Above this many nodes a canvas draws only the nodes in view (React Flow's
 * onlyRenderVisibleElements): a 2,000-node DFG's implementation graph is 8,200 elements, and
 * with all of them in the DOM two frames took 150 ms against 30 ms with those in view. Smaller
 * graphs keep every node in the DOM, so nothing appears or vanishes as the view moves.
 */
export const DRAW_IN_VIEW_ONLY_ABOVE = 500;

/**
 * The minimap draws every node (an SVG element each, not limited to the view): on a
 * 10,000-node DFG it was 10,000 of the page's 11,500 elements. Beyond this many nodes the
 * canvas has none.
 */
export const MINIMAP_UP_TO = 2000;

export function openingViewport(b: Bounds, width: number, height: number, opts: { minZoom?: number; maxZoom?: number; pad?: number; fitDownTo?: number } = {}) {
  const { maxZoom = 1.1, pad = 40 } = opts;
  const fit = Math.min((width - 2 * pad) / Math.max(b.width, 1), (height - 2 * pad) / Math.max(b.height, 1));
  // A graph that fits at `fitDownTo` or closer opens whole (a small window must not cut off
  // the last node); a larger one opens readable at `minZoom`, anchored at its source.
  const minZoom = opts.fitDownTo !== undefined && fit >= opts.fitDownTo ? opts.fitDownTo : (opts.minZoom ?? 0.7);
  const zoom = Math.max(minZoom, Math.min(maxZoom, fit));
  const x = fit >= minZoom ? (width - b.width * zoom) / 2 - b.x * zoom : pad - b.x * zoom;
  const y = b.height * zoom <= height - 2 * pad ? (height - b.height * zoom) / 2 - b.y * zoom : pad - b.y * zoom;
  return { x, y, zoom };
}

export function boundsOf(rects: readonly { x: number; y: number; width: number; height: number }[]): Bounds {
  if (!rects.length) return { x: 0, y: 0, width: 1, height: 1 };
  // A loop, not Math.min(...list): a spread of tens of thousands of arguments overflows the stack.
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const r of rects) {
    x0 = Math.min(x0, r.x);
    y0 = Math.min(y0, r.y);
    x1 = Math.max(x1, r.x + r.width);
    y1 = Math.max(y1, r.y + r.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * The size of a container element, once laid out (canvases mount when it is known), and
 * again whenever it changes (the window resized, a panel collapsed).
 */
export function useSize<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const take = () => {
      const r = el.getBoundingClientRect();
      setSize((s) => (s && Math.abs(s.width - r.width) < 1 && Math.abs(s.height - r.height) < 1 ? s : { width: r.width, height: r.height }));
    };
    take();
    const ro = new ResizeObserver(take);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return { ref, size };
}

/**
 * Fits the view again when the window is resized, so a resized window shows the same graph
 * rather than a corner of it. Only the window: the canvas also changes height as the Problems
 * list grows and shrinks, and refitting then would move nodes under the pointer mid-drag.
 * Large graphs (drawn only in view) keep their viewport: fitting them would put every node in
 * view, unreadable and slow.
 */
export function useRefitOnResize(nodes: number, fitViewOptions: { padding?: number; maxZoom?: number; minZoom?: number } = {}) {
  const flow = useReactFlow();
  const latest = useRef({ nodes, fitViewOptions });
  latest.current = { nodes, fitViewOptions };
  useEffect(() => {
    let frame = 0;
    const onResize = () => {
      cancelAnimationFrame(frame);
      const { nodes: n, fitViewOptions: o } = latest.current;
      if (n === 0 || n > DRAW_IN_VIEW_ONLY_ABOVE) return;
      // After the layout has settled at the new size.
      frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.2, maxZoom: 1.1, ...o }));
    };
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      cancelAnimationFrame(frame);
    };
  }, [flow]);
}

/**
 * Below this canvas size the minimap (200 x 150 in a corner) would cover a good part of the
 * graph: a 1280 x 720 window leaves the DFG canvas about 760 x 530, so it is left out there.
 */
export const MINIMAP_MIN_CANVAS = { width: 900, height: 560 };

export const minimapFits = (size: { width: number; height: number } | null) =>
  !!size && size.width >= MINIMAP_MIN_CANVAS.width && size.height >= MINIMAP_MIN_CANVAS.height;
