import type { BufferId, NodeId } from '../ids.js';
import type { Model } from '../document/model.js';
import { BufferIndex } from './buffers.js';
import type { PhasePlan, Transfer } from './phases.js';
import type { BufferAccess, BufferNode } from './types.js';

export interface LatencyResult {
  /** First cycle each node fires (paper 4.2.5: its input latency). */
  latency: Record<NodeId, number>;
  /** Cycle in which iteration 0 is written into each buffer. */
  written: Map<BufferId, number>;
  /** Per transfer (keyed by its destination buffer): first cycle and the lag of its read. */
  transfers: Map<BufferId, { startCycle: number; lag: number }>;
  /** Per node: the buffer and lag each input port reads. */
  inputs: Map<NodeId, Record<string, BufferAccess>>;
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
 */
export function computeLatency(model: Model, order: NodeId[], buffers: BufferNode[], plan: PhasePlan, overlap: boolean): LatencyResult {
  const byId = new Map(buffers.map((b) => [b.id, b]));
  const at = BufferIndex.of(buffers);
  const transferTo = new Map<BufferId, Transfer>(plan.transfers.map((t) => [t.to, t]));
  const written = new Map<BufferId, number>();
  const phaseOf = new Map<BufferId, number>();
  const transfers = new Map<BufferId, { startCycle: number; lag: number }>();
  const latency = Object.create(null) as Record<NodeId, number>;
  const inputs = new Map<NodeId, Record<string, BufferAccess>>();

  const propagate = (root: BufferNode) => {
    const stack = [root];
    while (stack.length) {
      const a = stack.pop()!;
      for (const id of a.next) {
        const t = transferTo.get(id)!;
        const w = written.get(a.id)!;
        const start = overlap || t.phase <= phaseOf.get(a.id)! ? w + 1 : w;
        transfers.set(id, { startCycle: start, lag: start - w });
        written.set(id, start);
        phaseOf.set(id, t.phase);
        stack.push(byId.get(id)!);
      }
    }
  };

  for (const id of order) {
    const n = model.node.get(id)!;
    const reads: { port: string; buffer: BufferNode; ready: number }[] = [];
    let L = 0;
    for (const p of n.kernel.inputs) {
      const e = n.inputs.get(p.name)!;
      const buffer = at.get(e.from.node, e.from.port, n.pe)!;
      const byTransfer = 'buffer' in buffer.from;
      const ready = written.get(buffer.id)! + (overlap && byTransfer ? 1 : 0);
      reads.push({ port: p.name, buffer, ready });
      L = Math.max(L, ready);
    }
    latency[id] = L;
    const access: Record<string, BufferAccess> = {};
    for (const r of reads) {
      const lag = L - written.get(r.buffer.id)!;
      access[r.port] = { buffer: r.buffer.id, lag };
      // A read lag cycles after the write needs lag + 1 slots (the writer is on the next one).
      r.buffer.depth = Math.max(r.buffer.depth, lag + 1);
    }
    inputs.set(id, access);
    for (const port of n.kernel.outputs) {
      const out = at.get(n.id, port.name, n.pe)!;
      written.set(out.id, L);
      phaseOf.set(out.id, plan.fire);
      propagate(out);
    }
  }
  return { latency, written, transfers, inputs };
}
