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
  const reports = {} as Record<PeId, MemoryReport>;
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
    const whole: BufferNode[] = [];
    const ranged: { b: BufferNode; segs: [number, number][]; weight: number }[] = [];
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
      const segs: [number, number][] = wraps < 0 ? [[w, end]] : [[w, length - 1], [0, wraps]];
      ranged.push({ b, segs, weight: b.bytes });
    }

    // Colours: one per multi-slot buffer, then DSatur over the single buffers.
    let colors = 0;
    for (const b of whole) b.color = colors++;
    const base = colors;
    const n = ranged.length;
    const adj: number[][] = ranged.map(() => []);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        if (overlaps(ranged[i].segs, ranged[j].segs)) {
          adj[i].push(j);
          adj[j].push(i);
        }
      }
    }
    const color = new Int32Array(n).fill(-1);
    const sat: Set<number>[] = ranged.map(() => new Set());
    for (let step = 0; step < n; step++) {
      let pick = -1;
      for (let i = 0; i < n; i++) {
        if (color[i] >= 0) continue;
        if (pick < 0 || sat[i].size > sat[pick].size || (sat[i].size === sat[pick].size && adj[i].length > adj[pick].length)) pick = i;
      }
      let c = 0;
      while (sat[pick].has(c)) c++;
      color[pick] = c;
      for (const j of adj[pick]) sat[j].add(c);
    }
    ranged.forEach((r, i) => (r.b.color = base + color[i]));
    colors = base + (n ? Math.max(...color) + 1 : 0);

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
    const live = new Float64Array(length + 1);
    for (const r of ranged) for (const [s, e] of r.segs) {
      live[s] += r.weight;
      live[e + 1] -= r.weight;
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

function overlaps(a: [number, number][], b: [number, number][]): boolean {
  for (const [s1, e1] of a) for (const [s2, e2] of b) if (s1 <= e2 && s2 <= e1) return true;
  return false;
}
