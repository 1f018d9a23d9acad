import type { Model, ModelNode } from '../document/model.js';
import type { LatencyResult } from './latency.js';
import type { BufferTable } from './table.js';
import type { Buffers, MemoryReport } from './types.js';

/**
 * Joins as views (lowered multi-rate graphs: an input fed in parts, one edge per part). Where
 * every part of an input is a whole buffer on the consumer's PE (they always are on its PE:
 * reads are local), all of the same depth and read with the same lag, and none is already laid
 * out for another join, the parts are laid out contiguously in the storage of the first one
 * (the base): buffers.view = the base's number, buffers.viewOffset = where the part lands in the
 * input. The firing then reads one contiguous range of the base and nothing is copied; the
 * writers of the parts (firings, transfers) write straight into it. Otherwise the firing's input
 * stays a list of parts, which the agent gathers into a scratch buffer (a copy) before firing.
 * Runs after the latency pass (depths and lags are final) and before the memory pass, which
 * keeps a base and its views together.
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function layoutJoins(model: Model, order: readonly ModelNode[], buffers: Buffers, table: BufferTable, lat: LatencyResult): JoinCounts {
  const { edges, inputs } = model;
  const { view, viewOffset, depth, bytes, initial } = buffers;
  // Buffers already in a unit (as base or view).
  const taken = new Uint8Array(buffers.count);
  const counts: JoinCounts = {
    views: new Int32Array(model.pes.length),
    gathers: new Int32Array(model.pes.length),
    gatherBytes: new Float64Array(model.pes.length),
  };
  for (let s = 0; s < order.length; s++) {
    const n = order[s];
    const end = inputs.start[n.index + 1];
    for (let k = inputs.start[n.index]; k < end;) {
      // The parts of one port are consecutive, in token order.
      let last = k + 1;
      while (last < end && edges.toPort[inputs.edge[last]] === edges.toPort[inputs.edge[k]]) last++;
      if (last - k > 1 && viewable(k, last)) {
        const base = table.read[inputs.edge[k]];
        for (let x = k; x < last; x++) {
          const e = inputs.edge[x];
          const b = table.read[e];
          taken[b] = 1;
          if (b !== base) {
            view[b] = base;
            viewOffset[b] = edges.toOffset[e];
            counts.views[n.peIndex]++;
          }
        }
      } else if (last - k > 1 && !laidOut(k, last)) {
        counts.gathers[n.peIndex]++;
        for (let x = k; x < last; x++) counts.gatherBytes[n.peIndex] += edges.bytes[inputs.edge[x]];
      }
      k = last;
    }
  }
  return counts;

  /** Whether parts from .. to - 1 are already laid out as views of the first (the parts of another join, in the same order): one read, as decode.ts finds it. */
  function laidOut(from: number, to: number): boolean {
    const base = table.read[inputs.edge[from]];
    if (view[base] >= 0) return false;
    for (let x = from; x < to; x++) {
      const e = inputs.edge[x];
      const b = table.read[e];
      if (table.readOffset[e] !== 0 || edges.bytes[e] !== bytes[b] || lat.inputLag[e] !== lat.inputLag[inputs.edge[from]]) return false;
      if (x > from && (view[b] !== base || viewOffset[b] !== edges.toOffset[e])) return false;
    }
    return true;
  }

  function viewable(from: number, to: number): boolean {
    const first = table.read[inputs.edge[from]];
    for (let x = from; x < to; x++) {
      const e = inputs.edge[x];
      const b = table.read[e];
      if (taken[b] || initial[b] > 0 || table.readOffset[e] !== 0 || edges.bytes[e] !== bytes[b]) return false;
      if (depth[b] !== depth[first] || lat.inputLag[e] !== lat.inputLag[inputs.edge[from]]) return false;
      // The same buffer twice (one part read into two places) cannot sit at two offsets.
      for (let y = from; y < x; y++) if (table.read[inputs.edge[y]] === b) return false;
    }
    return true;
  }
}

/** Per PE (by index): buffers laid out as views, and inputs whose parts are gathered (copied) with their bytes. */
export interface JoinCounts {
  views: Int32Array;
  gathers: Int32Array;
  gatherBytes: Float64Array;
}

/** Writes the join counts into the memory reports (each PE's `views`, `gathers`, `gatherBytes`). */
export function reportJoins(model: Model, counts: JoinCounts, memory: Record<string, MemoryReport>): void {
  for (const pe of model.pes) {
    const m = memory[pe.id];
    // Only where there are joins: single-rate reports stay as they were.
    if (!counts.views[pe.index] && !counts.gathers[pe.index]) continue;
    m.views = counts.views[pe.index];
    m.gathers = counts.gathers[pe.index];
    m.gatherBytes = counts.gatherBytes[pe.index];
  }
}

/** By buffer number: the base of the unit it belongs to (itself for a base), or -1. */
export function viewUnits(buffers: Buffers): Int32Array {
  const unit = new Int32Array(buffers.count).fill(-1);
  for (let i = 0; i < buffers.count; i++) {
    const base = buffers.view[i];
    if (base < 0) continue;
    unit[i] = base;
    unit[base] = base;
  }
  return unit;
}
