import type { TraceEvent, TraceKind } from '@pipeloom/core';
import type { TimelineHandle } from '../timeline/Timeline.js';
import type { RunStore } from '../store/run/store.js';

// `window.__pipeloomBench` for `npm run bench:timeline`: streams synthetic events through
// the same ingest path a run uses (batches of TraceEvent objects into the column store) while
// the timeline follows live, then drives zoom and pan frame by frame and reports frame times.

export interface IngestReport {
  events: number;
  lanes: number;
  /** Milliseconds spent inside ingest calls. */
  ingestMs: number;
  /** Milliseconds from the first batch to the last, timeline redraws included. */
  wallMs: number;
  /** Milliseconds inside the store's publishes (the live numbers: trace analysis), and how many. */
  publishMs: number;
  publishes: number;
  /** Milliseconds of the last publish, after the whole stream (nothing new since the one before). */
  lastPublishMs: number;
}

export interface FrameReport {
  frames: number;
  /** Milliseconds between consecutive animation frames. */
  intervals: number[];
  /** Milliseconds drawing each frame. */
  draws: number[];
  /** Boxes drawn in the last frame. */
  boxes: number;
}

const KINDS: TraceKind[] = ['fire', 'transfer', 'wait', 'barrier'];

/** Synthetic events: `hosts` x 2 PEs x 2 threads, back-to-back events of 20-200 µs per lane. */
export function syntheticBatches(total: number, batch: number, hosts = 4): () => TraceEvent[] | null {
  const lanes: { host: string; pe: string; thread: string; t: number; n: number }[] = [];
  for (let h = 0; h < hosts; h++)
    for (const pe of ['cpu0', 'gpu0']) for (const thread of ['main', `send:cpu@h${(h + 1) % hosts}`]) lanes.push({ host: `h${h}`, pe, thread, t: 0, n: 0 });
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  let made = 0;
  return () => {
    if (made >= total) return null;
    const n = Math.min(batch, total - made);
    const out: TraceEvent[] = new Array(n);
    for (let j = 0; j < n; j++) {
      const l = lanes[(made + j) % lanes.length];
      const d = 20 + rnd() * 180;
      const kind = l.thread === 'main' ? KINDS[l.n % 3 === 2 ? 3 : 0] : KINDS[l.n % 2 ? 2 : 1];
      const cycle = Math.floor(l.n / 3);
      out[j] = {
        host: l.host,
        pe: l.pe,
        thread: l.thread,
        kind,
        name: kind === 'fire' ? `n${l.n % 5}` : kind === 'transfer' ? `bn_${l.n % 7}` : kind,
        iteration: cycle,
        cycle,
        start: l.t,
        end: l.t + d,
        bytes: kind === 'transfer' ? 1 << 20 : undefined,
      };
      l.t += d + rnd() * 10;
      l.n++;
    }
    made += n;
    return out;
  };
}

const frame = () => new Promise<number>((r) => requestAnimationFrame(r));

export function installBenchHook(run: RunStore, timeline: () => TimelineHandle | null): () => void {
  const hook = {
    async ingest(total = 1_000_000, batch = 10_000): Promise<IngestReport> {
      run.reset();
      run.setStreaming(true);
      timeline()?.follow();
      const next = syntheticBatches(total, batch);
      let ingestMs = 0;
      let publishMs = 0;
      let publishes = 0;
      let lastPublishMs = 0;
      const publish = () => {
        const s = performance.now();
        run.publish();
        lastPublishMs = performance.now() - s;
        publishMs += lastPublishMs;
        publishes++;
      };
      const t0 = performance.now();
      // Several batches per frame, as a fast stream delivers them; the timeline redraws between.
      let batches = 0;
      for (let b = next(); b; b = next()) {
        const s = performance.now();
        run.ingest(b);
        ingestMs += performance.now() - s;
        if (++batches % 5 === 0) {
          publish();
          await frame();
        }
      }
      const wallMs = performance.now() - t0;
      publish();
      run.setStreaming(false);
      await frame();
      return { events: run.measured().length, lanes: run.measured().laneCount, ingestMs, wallMs, publishMs, publishes, lastPublishMs };
    },

    /** Zooms (in then out) or pans for `frames` frames, one step per animation frame. */
    async animate(mode: 'zoom' | 'pan', frames = 240, fraction = 1): Promise<FrameReport> {
      const tl = timeline();
      if (!tl) throw new Error('the timeline is not mounted');
      const m = run.measured();
      const full = { t0: m.minStart, t1: m.maxEnd };
      const span = (full.t1 - full.t0) * fraction;
      const mid = (full.t0 + full.t1) / 2;
      tl.setWindow({ t0: mid - span / 2, t1: mid + span / 2 });
      tl.flush();
      const intervals: number[] = [];
      const draws: number[] = [];
      let prev = await frame();
      for (let f = 0; f < frames; f++) {
        if (mode === 'zoom') tl.zoomBy(f < frames / 2 ? 0.95 : 1 / 0.95, 0.5);
        else tl.panBy(f % 200 < 100 ? 0.01 : -0.01);
        tl.flush();
        draws.push(tl.lastFrame().ms);
        const now = await frame();
        intervals.push(now - prev);
        prev = now;
      }
      return { frames, intervals, draws, boxes: tl.lastFrame().boxes };
    },
  };
  (window as unknown as { __pipeloomBench?: typeof hook }).__pipeloomBench = hook;
  return () => {
    delete (window as unknown as { __pipeloomBench?: typeof hook }).__pipeloomBench;
  };
}
