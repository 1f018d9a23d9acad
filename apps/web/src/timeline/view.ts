import { fit, pan, zoom, type Window } from './viewport.js';

// Where the timeline looks: the time window, whether it follows the live edge, the vertical
// scroll, the canvas size, keys held and the range selected. No React and no canvas, so input
// handling is plain method calls.

export const RULER = 22;
export const GUTTER = 196;

export class TimelineView {
  win: Window = { t0: 0, t1: 1000 };
  follow = true;
  scrollY = 0;
  width = 0;
  height = 0;
  dpr = 1;
  /** Pointer over the tracks as a fraction of their width (-1: elsewhere). */
  pointer = -1;
  readonly keys = new Set<string>();
  /** The time range selected for statistics. */
  range: Window | null = null;

  constructor(private readonly onFollow: (following: boolean) => void = () => {}) {}

  trackWidth(): number {
    return Math.max(1, this.width - GUTTER);
  }

  /** µs at a CSS x over the canvas. */
  timeAt(x: number): number {
    return this.win.t0 + ((x - GUTTER) / this.trackWidth()) * (this.win.t1 - this.win.t0);
  }

  setFollow(on: boolean): void {
    if (this.follow === on) return;
    this.follow = on;
    this.onFollow(on);
  }

  /** Moves the window (the user's move: following stops). */
  moveTo(w: Window): void {
    this.setFollow(false);
    this.win = w;
  }

  /** Wheel: over the gutter scrolls the tracks, else shift/horizontal pans and vertical zooms about the pointer. */
  wheel(x: number, dx: number, dy: number, shift: boolean, ctrl: boolean): 'scroll' | 'move' {
    if (x < GUTTER && !ctrl) {
      this.scrollY += dy;
      return 'scroll';
    }
    const span = this.win.t1 - this.win.t0;
    if (shift || Math.abs(dx) > Math.abs(dy)) this.moveTo(pan(this.win, ((shift ? dy : dx) / this.trackWidth()) * span));
    else this.moveTo(zoom(this.win, Math.exp(dy * 0.002), this.timeAt(x)));
    return 'move';
  }

  /** One frame of held W/A/S/D from `from` (the fitted window while following); true if it moved. */
  stepKeys(from: Window): boolean {
    if (!this.keys.size) return false;
    const span = from.t1 - from.t0;
    let w = from;
    // Zoom about the pointer when it is over the tracks, else about the centre.
    const at = this.pointer >= 0 ? w.t0 + this.pointer * span : (w.t0 + w.t1) / 2;
    if (this.keys.has('w')) w = zoom(w, 0.92, at);
    if (this.keys.has('s')) w = zoom(w, 1 / 0.92, at);
    if (this.keys.has('a')) w = pan(w, -span * 0.02);
    if (this.keys.has('d')) w = pan(w, span * 0.02);
    this.moveTo(w);
    return true;
  }

  /** Keeps the scroll inside the content. */
  clampScroll(contentHeight: number): void {
    this.scrollY = Math.min(Math.max(0, this.scrollY), Math.max(0, contentHeight - (this.height - RULER)));
  }
}

/** The window that shows everything: both stores' starts, the plan's end only until the run has events. */
export function fitAll(
  measured: { minStart: number; maxEnd: number; length: number },
  predicted: { minStart: number; maxEnd: number } | undefined,
  showPredicted: boolean,
): Window {
  const min = Math.min(measured.minStart, predicted?.minStart ?? Infinity);
  const max = Math.max(measured.maxEnd, showPredicted && predicted && !measured.length ? predicted.maxEnd : -Infinity);
  return fit(min, max);
}
