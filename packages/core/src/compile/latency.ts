import type { NodeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import { firePhase, type PhasePlan } from './phases.js';
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
  /**
   * By edge (position in app.edges): the lag of its consumer's read of the buffer table.read
   * names. A delayed edge's lag includes its delay: in cycle L + k the consumer reads what was
   * written for iteration k - delay.
   */
  inputLag: Int32Array;
  /** Loops that need more delay than they carry (compile turns each into a diagnostic). */
  loops: LoopProblem[];
}

/**
 * Start cycles: paper 4.2.5 made exact for phases.ts's phase order, delays and loops included
 * (docs/contract.md, "Start cycles"; simulate.ts checks them cycle by cycle).
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function computeLatency(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  plan: PhasePlan,
  overlap: boolean,
): LatencyResult {
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
  const { delay } = model.edges;

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
        // With overlap every copy of the `overlap` phase (0) reads last cycle's slot; a scan's
        // copies come in later phases and, like any copy after its writer, move data at once.
        const start = phase <= phaseOf[a] ? w + 1 : w;
        transferStart[id] = start;
        transferLag[id] = start - w;
        written[id] = start;
        phaseOf[id] = phase;
        stack[++top] = id;
      }
    }
  };
  // The first cycle a node firing in phase `fire` can read a buffer's iteration 0: the same
  // cycle when it was written in an earlier phase, or by a local producer earlier in the same
  // fire phase; the next when written by a copy of its own phase (overlap) or a later phase
  // (a scan's output, read by an ordinary node of its PE).
  const readable = (buffer: number, fire: number) =>
    written[buffer] + (phaseOf[buffer] > fire || (phaseOf[buffer] === fire && table.parent[buffer] >= 0) ? 1 : 0);

  // Delayed inputs (feedback) read iteration k - d in cycle L + k, so they only need
  // L + d >= readable: a difference constraint that may point backwards in the schedule (a
  // loop). The pass runs in schedule order with a lower bound per node; a violated delayed
  // input raises its consumer's bound and the pass runs again (Bellman-Ford over the delayed
  // edges: one more round per delayed edge on a chain). A loop whose data takes longer round
  // than its delay never settles: each round raises it again, and it is reported.
  const delayed: number[] = [];
  for (let e = 0; e < delay.length; e++) if (delay[e] > 0) delayed.push(e);
  const position = new Int32Array(model.doc.app.nodes.length);
  order.forEach((n, s) => (position[n.index] = s));
  const floor = new Int32Array(order.length);
  // A delayed input read from its producer's own buffer on the PE, where the producer fires at
  // or after the consumer in the cycle (a loop), sees that firing's write only next cycle.
  const readableDelayed = (e: number) => {
    const buffer = table.read[e];
    const late = table.parent[buffer] < 0 && position[model.edges.from[e]] >= position[model.edges.to[e]];
    return readable(buffer, firePhase(plan, model.nodes[model.edges.to[e]])) + (late ? 1 : 0);
  };
  // A scan fires as one: every node of it starts in the cycle its latest member can (a context
  // input arriving late on one worker holds the whole scan back). Its members, by scan.
  const scans = new Map<string, number[]>();
  order.forEach((n, s) => {
    if (!n.scan) return;
    const list = scans.get(n.scan.node);
    if (list) list.push(s);
    else scans.set(n.scan.node, [s]);
  });
  const rerun = delayed.length > 0 || scans.size > 0;
  const baseDepth = rerun ? depth.slice() : depth;
  const inputs = model.inputs;
  const loops: LoopProblem[] = [];
  for (let round = 0; ; round++) {
    if (rerun) depth.set(baseDepth);
    for (let s = 0; s < order.length; s++) {
      const n = order[s];
      const first = inputs.start[n.index];
      const end = inputs.start[n.index + 1];
      const fire = firePhase(plan, n);
      let L = floor[s];
      for (let k = first; k < end; k++) if (delay[inputs.edge[k]] === 0) L = Math.max(L, readable(table.read[inputs.edge[k]], fire));
      latency[n.id] = L;
      start[s] = L;
      for (let k = first; k < end; k++) {
        const e = inputs.edge[k];
        if (delay[e] > 0) continue;
        const buffer = table.read[e];
        const lag = L - written[buffer];
        inputLag[e] = lag;
        // A read lag cycles after the write needs lag + 1 slots (the writer is on the next one).
        depth[buffer] = Math.max(depth[buffer], lag + 1);
      }
      for (let j = 0; j < n.kernel.outputs.length; j++) {
        const out = table.output[n.index] + j;
        written[out] = L;
        phaseOf[out] = fire;
        propagate(out);
      }
    }
    let raised = false;
    for (const e of delayed) {
      const s = position[model.edges.to[e]];
      const need = readableDelayed(e) - delay[e];
      if (start[s] < need) {
        floor[s] = need;
        raised = true;
      }
    }
    for (const members of scans.values()) {
      let L = 0;
      for (const s of members) L = Math.max(L, start[s]);
      for (const s of members) {
        if (start[s] < L) {
          floor[s] = L;
          raised = true;
        }
      }
    }
    if (!raised) break;
    if (round > delayed.length + scans.size) {
      // Still rising: a loop needs more initial tokens than it has. Report each violated edge once.
      for (const e of delayed) {
        const s = position[model.edges.to[e]];
        const round = readableDelayed(e) - start[s];
        if (round > delay[e]) loops.push({ edge: e, cycles: round });
      }
      break;
    }
  }
  for (const e of delayed) {
    const buffer = table.read[e];
    const lag = start[position[model.edges.to[e]]] + delay[e] - written[buffer];
    inputLag[e] = lag;
    // The d initial iterations sit in distinct slots until read (compile/initial.ts fills them).
    depth[buffer] = Math.max(depth[buffer], lag + 1, delay[e]);
  }
  return { latency, start, written, transferStart, transferLag, inputLag, loops };
}

/** A delayed edge closing a loop whose data takes `cycles` cycles round, more than its delay: static mode cannot run it. */
export interface LoopProblem {
  edge: number;
  cycles: number;
}
