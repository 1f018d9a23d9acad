import { bufferNodes, type ImplementationGraph, type TraceColumns } from '@pipeloom/core';
import type { Window } from './viewport.js';

// Flow arrows: a transfer into a buffer node -> the firing that reads it, same iteration (what
// the Chrome trace export draws, here in the timeline itself). The firings are indexed by node
// and iteration as events arrive: the store only grows, so each event is looked at once.

export interface Flow {
  /** Event numbers in the measured store: the transfer and the firing it feeds. */
  from: number;
  to: number;
}

const FIRE = 0;
const TRANSFER = 1;

export class FlowIndex {
  private readonly readers = new Map<string, string[]>();
  private readonly fires = new Map<string, number>();
  private scanned = 0;

  constructor(
    readonly store: TraceColumns,
    readonly graph: ImplementationGraph,
  ) {
    for (const b of bufferNodes(graph))
      if (b.consumers.length)
        this.readers.set(
          b.id,
          b.consumers.map((c) => c.node),
        );
  }

  /** Indexes the events appended since the last call. */
  update(): void {
    const c = this.store;
    for (let i = this.scanned; i < c.length; i++) if (c.kind[i] === FIRE && c.node[i] >= 0) this.fires.set(`${c.names[c.node[i]]}|${c.iteration[i]}`, i);
    this.scanned = c.length;
  }

  /** The firings transfer i feeds. */
  targets(i: number): number[] {
    const c = this.store;
    if (c.kind[i] !== TRANSFER || c.buffer[i] < 0) return [];
    const out: number[] = [];
    for (const node of this.readers.get(c.names[c.buffer[i]]) ?? []) {
      const f = this.fires.get(`${node}|${c.iteration[i]}`);
      if (f !== undefined) out.push(f);
    }
    return out;
  }

  /** Flows out of the transfers visible in `lanes` over the window, at most `max`. */
  visible(lanes: readonly number[], win: Window, max = 300): Flow[] {
    this.update();
    const c = this.store;
    const out: Flow[] = [];
    for (const lane of lanes) {
      const [from, to] = c.window(lane, win.t0, win.t1);
      const order = c.laneOrder(lane);
      for (let k = from; k < to; k++) {
        const i = order[k];
        if (c.kind[i] !== TRANSFER || c.end[i] < win.t0) continue;
        for (const f of this.targets(i)) {
          out.push({ from: i, to: f });
          if (out.length >= max) return out;
        }
      }
    }
    return out;
  }
}
