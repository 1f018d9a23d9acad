import type { NodeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import type { PhasePlan } from './phases.js';
import type { BufferTable } from './table.js';
import type { Buffers } from './types.js';

export interface LatencyResult {
  /** First cycle each node fires (paper 4.2.5: its input latency). */
  latency: Record<NodeId, number>;
  /** The same, by schedule position. */
  start: Int32Array;
  /** By buffer number: the cycle in which iteration 0 is written into it. */
  written: Int32Array;
  /** By buffer number, for a buffer filled by a copy: the copy's first cycle and the lag of its read. */
  transferStart: Int32Array;
  transferLag: Int32Array;
  /** By edge (position in app.edges): the lag of its consumer's read of the buffer table.read names. */
  inputLag: Int32Array;
}

/**
 * Paper 4.2.5, made exact for the phase order of phases.ts, so a node never reads a transient
 * and always reads iteration k - L in cycle k (compile/simulate.ts checks this cycle by cycle).
 *
 * Iteration 0 of a node's output is written in its first cycle L. A transfer reads its source
 * in the first cycle where the write is visible:
 *   - with overlap everything in a cycle runs at once on double buffers, so a transfer sees
 *     last cycle's slot: one cycle per double buffer, the paper's rule;
 *   - without overlap, a transfer whose phase comes after the source's writer (a pcie copy
 *     after the cpu-cpu copy that filled its source) moves the data in the same cycle, else in
 *     the next. This is the paper's "one cycle per pair of buffers on different PEs" except
 *     where its own phase order passes data two hops in one cycle (gpu0@h0 -> cpu@h0 ->
 *     cpu@h1 -> gpu0@h1 takes 2 cycles, not 3).
 * A node fires once every input is readable: in the same cycle after a local producer or a
 * non-overlapped copy, one cycle after an overlapped copy. Where inputs arrive in different
 * cycles the early one is kept in a deeper buffer and read with a larger lag, so all inputs
 * of one firing belong to the same iteration.
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function computeLatency(model: Model, order: readonly ModelNode[], buffers: Buffers, table: BufferTable, plan: PhasePlan, overlap: boolean): LatencyResult {
  const count = buffers.count;
  const depth = buffers.depth;
  const written = new Int32Array(count);
  // By buffer number: the phase that writes it (the fire phase, or its copy's phase).
  const phaseOf = new Int32Array(count);
  const transferStart = new Int32Array(count);
  const transferLag = new Int32Array(count);
  const latency = Object.create(null) as Record<NodeId, number>;
  const start = new Int32Array(order.length);
  const inputLag = new Int32Array(table.read.length);
  const { children } = table;

  // One stack for every propagation: a buffer is pushed at most once per output, so the
  // buffer count bounds its depth.
  const stack = new Int32Array(count);
  const propagate = (root: number) => {
    let top = 0;
    stack[0] = root;
    while (top >= 0) {
      const a = stack[top--];
      const w = written[a];
      for (let k = children.start[a]; k < children.start[a + 1]; k++) {
        const id = children.list[k];
        const phase = plan.phase[id];
        const start = overlap || phase <= phaseOf[a] ? w + 1 : w;
        transferStart[id] = start;
        transferLag[id] = start - w;
        written[id] = start;
        phaseOf[id] = phase;
        stack[++top] = id;
      }
    }
  };

  const inputs = model.inputs;
  for (let s = 0; s < order.length; s++) {
    const n = order[s];
    const first = inputs.start[n.index];
    const end = inputs.start[n.index + 1];
    let L = 0;
    for (let k = first; k < end; k++) {
      const buffer = table.read[inputs.edge[k]];
      const byTransfer = table.parent[buffer] >= 0;
      L = Math.max(L, written[buffer] + (overlap && byTransfer ? 1 : 0));
    }
    latency[n.id] = L;
    start[s] = L;
    for (let k = first; k < end; k++) {
      const e = inputs.edge[k];
      const buffer = table.read[e];
      const lag = L - written[buffer];
      inputLag[e] = lag;
      // A read lag cycles after the write needs lag + 1 slots (the writer is on the next one).
      depth[buffer] = Math.max(depth[buffer], lag + 1);
    }
    for (let j = 0; j < n.kernel.outputs.length; j++) {
      const out = table.output[n.index] + j;
      written[out] = L;
      phaseOf[out] = plan.fire;
      propagate(out);
    }
  }
  return { latency, start, written, transferStart, transferLag, inputLag };
}
