import type { BufferId, NodeId, PeId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { LatencyResult } from './latency.js';
import type { PhasePlan } from './phases.js';
import type { BufferNode, MemoryReport } from './types.js';

/**
 * Paper 4.2.4, memory sharing per PE: buffers that are never live at the same time share
 * storage. The paper's rule (two buffers connected to the same computation node are
 * incompatible) is not enough once transfers and cycles are in play, so liveness is computed
 * on one cycle of the PE, as positions: each transfer phase, then each firing on this PE in
 * schedule order (with overlap only the firings: transfers run beside them).
 *   - A buffer with 2 or more slots keeps data across the cycle boundary (a transfer or a later
 *     firing reads last cycle's slot while this cycle's is written): live the whole cycle,
 *     incompatible with every other buffer on its PE, so it gets a colour of its own.
 *   - A single buffer is live from its write to its last read; a read one cycle later (a
 *     transfer phase reading what a firing wrote last cycle) wraps round the cycle's end.
 * Two buffers live at a common position (ends included: a firing reading one and writing the
 * other is the paper's rule) are incompatible. DSatur colours each PE's graph; a colour is
 * allocated at its largest member (bytes x slots). The lower bound is the heaviest set of
 * buffers live at one position, a clique.
 */
export function colorMemory(model: Model, order: NodeId[], buffers: BufferNode[], plan: PhasePlan, lat: LatencyResult, overlap: boolean): Record<PeId, MemoryReport> {
  const reports = Object.create(null) as Record<PeId, MemoryReport>;
  const byPe = new Map<PeId, BufferNode[]>();
  for (const pe of model.pes) byPe.set(pe.id, []);
  for (const b of buffers) byPe.get(b.pe)!.push(b);
  const firePos = new Map<NodeId, number>();
  const firesOn = new Map<PeId, number>();
  for (const id of order) {
    const pe = model.node.get(id)!.pe;
    const j = firesOn.get(pe) ?? 0;
    firesOn.set(pe, j + 1);
    firePos.set(id, (overlap ? 0 : plan.fire) + j);
  }
  const transferPhase = new Map<BufferId, number>(plan.transfers.map((t) => [t.to, t.phase]));

  for (const pe of model.pes) {
    const list = byPe.get(pe.id)!;
    const length = Math.max(1, (overlap ? 0 : plan.fire) + (firesOn.get(pe.id) ?? 0));
    const words = (length + 31) >>> 5;
    const whole: BufferNode[] = [];
    const ranged: BufferNode[] = [];
    // Live positions of each single buffer as a bitset (words per buffer), and a live-weight profile.
    const bits: number[] = [];
    const live = new Float64Array(length + 1);
    const mark = (i: number, s: number, e: number, weight: number) => {
      for (let x = s; x <= e; x++) bits[i * words + (x >>> 5)] |= 1 << (x & 31);
      live[s] += weight;
      live[e + 1] -= weight;
    };
    for (const b of list) {
      if (b.depth >= 2) {
        whole.push(b);
        continue;
      }
      const w = 'node' in b.from ? firePos.get(b.from.node)! : transferPhase.get(b.id)!;
      let end = w;
      let wraps = -1;
      for (const c of b.consumers) {
        const lag = lat.inputs.get(c.node)![c.port].lag;
        if (lag === 0) end = Math.max(end, firePos.get(c.node)!);
        else wraps = Math.max(wraps, firePos.get(c.node)!);
      }
      for (const next of b.next) {
        const pos = transferPhase.get(next)!;
        if (lat.transfers.get(next)!.lag === 0) end = Math.max(end, pos);
        else wraps = Math.max(wraps, pos);
      }
      const i = ranged.length;
      ranged.push(b);
      for (let k = 0; k < words; k++) bits.push(0);
      if (wraps < 0) mark(i, w, end, b.bytes);
      else {
        mark(i, w, length - 1, b.bytes);
        mark(i, 0, Math.min(wraps, w - 1), b.bytes);
      }
    }

    // Colours: one per multi-slot buffer, then DSatur over the single buffers.
    let colors = 0;
    for (const b of whole) b.color = colors++;
    const base = colors;
    const n = ranged.length;
    const conflict = (i: number, j: number) => {
      for (let k = 0; k < words; k++) if (bits[i * words + k] & bits[j * words + k]) return true;
      return false;
    };
    const degree = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        if (conflict(i, j)) {
          degree[i]++;
          degree[j]++;
        }
      }
    }
    // DSatur: colour next the buffer with the most distinct neighbour colours (then the most
    // neighbours), with the smallest colour none of its neighbours has. Neighbour colours are
    // kept as bitsets.
    const color = new Int32Array(n).fill(-1);
    const satCount = new Int32Array(n);
    const satBits: number[][] = ranged.map(() => []);
    for (let step = 0; step < n; step++) {
      let pick = -1;
      for (let i = 0; i < n; i++) {
        if (color[i] >= 0) continue;
        if (pick < 0 || satCount[i] > satCount[pick] || (satCount[i] === satCount[pick] && degree[i] > degree[pick])) pick = i;
      }
      const mine = satBits[pick];
      let c = 0;
      while (((mine[c >>> 5] ?? 0) >>> (c & 31)) & 1) c++;
      color[pick] = c;
      for (let j = 0; j < n; j++) {
        if (color[j] >= 0 || !conflict(pick, j)) continue;
        const sb = satBits[j];
        const w = c >>> 5;
        while (sb.length <= w) sb.push(0);
        if (!((sb[w] >>> (c & 31)) & 1)) {
          sb[w] |= 1 << (c & 31);
          satCount[j]++;
        }
      }
    }
    let used = 0;
    ranged.forEach((b, i) => {
      b.color = base + color[i];
      used = Math.max(used, color[i] + 1);
    });
    colors = base + used;

    const groups: MemoryReport['colors'] = [];
    for (let c = 0; c < colors; c++) groups.push({ color: c, bytes: 0, buffers: [] });
    let before = 0;
    for (const b of list) {
      const size = b.bytes * b.depth;
      before += size;
      const g = groups[b.color];
      g.bytes = Math.max(g.bytes, size);
      g.buffers.push(b.id);
    }
    let peak = 0;
    for (let i = 0, acc = 0; i < length; i++) peak = Math.max(peak, (acc += live[i]));
    reports[pe.id] = {
      before,
      after: groups.reduce((a, g) => a + g.bytes, 0),
      lowerBound: whole.reduce((a, b) => a + b.bytes * b.depth, 0) + peak,
      colors: groups,
      capacity: pe.memory,
    };
  }
  return reports;
}
