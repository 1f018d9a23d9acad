import type { PeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { BufferTable } from './table.js';
import type { Buffers } from './types.js';

/**
 * The phases of one cycle and where each copy goes. A copy is the IG edge into a buffer
 * filled from another (table.parent), so the plan is kept by buffer number, in typed arrays:
 * on a 10,000-node graph an object per copy cost more than placing it.
 */
export interface PhasePlan {
  names: string[];
  /** Index of the phase in which ordinary nodes (and a scan's level 0, its locals) fire. */
  fire: number;
  /** By scan level (ModelNode.scan): the phase its nodes fire in; fires[0] is `fire`. Just [fire] without scans. */
  fires: number[];
  /** By phase: whether a cluster-wide barrier closes it (false only inside a scan's firing). */
  barrier: boolean[];
  /** By buffer number: the phase of the copy that fills it, -1 for a producer's buffer. */
  phase: Int32Array;
  /** By buffer number: the architecture link its copy crosses (undefined for a producer's buffer). */
  link: (Link | undefined)[];
}

/** The phase node n fires in: its scan level's, or the ordinary fire phase. */
export function firePhase(plan: PhasePlan, n: ModelNode): number {
  return n.scan ? plan.fires[n.scan.level] : plan.fire;
}

/**
 * The phases of one cycle, the same on every PE so barriers line up (paper 4.3).
 *
 * With overlap: one phase `overlap` holding every transfer and firing, barrier at its end.
 *
 * Without overlap, the paper's order: `cpu-cpu` (transfers between hosts), barrier, `pcie`
 * (transfers inside a host, both directions at once), barrier, `fire`, barrier. A transfer
 * whose source buffer is written by another transfer of the same group would race it, so
 * such a chain (gpu0@h0 -> cpu@h0 -> gpu1@h0, or cpu@h0 -> cpu@h1 -> cpu@h2) is split into
 * ordered sub-phases `pcie#0`, `pcie#1`, ... (names get the suffix only when split). Keeping
 * host-to-host before host-to-GPU is what makes the P-I-I-C cycle T = Th + Tib + a*n. A group
 * with no transfer on any PE (cpu-cpu on a single host) has no phase: its barrier would cost
 * every agent a cluster-wide wait per cycle for nothing.
 *
 * Scans (the scan is one firing holding all its PEs): after `fire` (or `overlap`),
 * each scan level l = 1 .. S gets its copies, `scan#l` (split `scan#l.0`, `scan#l.1`, ... along
 * chains of copies, as above), then `fire#l`, where level l's nodes fire. A scan copy is one of
 * a scan node's output to a later level of the same scan: it moves the data in the same cycle
 * (it comes after its writer), so every level of the scan fires in the same cycle. From the
 * first fire phase to the cycle's last phase no cluster-wide barrier closes a phase: a
 * receiving PE waits only for its own inputs (agents meet their host's PE threads between
 * phases; docs/contract.md). Copies into a scan from outside it, and out of it, stay ordinary.
 *
 * `order`: the model's nodes in schedule order (buffers.source indexes it).
 */
export function planPhases(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  overlap: boolean,
  links?: (Link | undefined)[],
): PhasePlan {
  const count = buffers.count;
  const phase = new Int32Array(count).fill(-1);
  // insertBuffers gives every copy its route's link; a list made otherwise gets the fastest.
  const link: (Link | undefined)[] = links ?? new Array(count);
  // By buffer number, for buffers filled by a copy: 0 between hosts, 1 inside a host, and the
  // copy's depth in a chain of copies of the same group.
  const group = new Uint8Array(count);
  const level = new Int32Array(count);
  // Sub-phases per group; a group without transfers gets no phase (nor its barrier).
  const levels = [0, 0];
  const scan = scanCopies(order, buffers, table);
  for (let i = 0; i < count; i++) {
    const p = table.parent[i];
    if (p < 0) continue;
    link[i] ??= fastestLink(model, model.pes[table.pe[p]].id, model.pes[table.pe[i]].id, buffers.bytes[i]);
    phase[i] = 0;
    if (scan && scan.step[i] > 0) continue;
    const g = model.pes[table.pe[p]].host === model.pes[table.pe[i]].host ? 1 : 0;
    group[i] = g;
    level[i] = table.parent[p] >= 0 && group[p] === g ? level[p] + 1 : 0;
    levels[g] = Math.max(levels[g], level[i] + 1);
  }
  const names: string[] = [];
  if (overlap) names.push('overlap');
  else {
    for (const [g, base] of ['cpu-cpu', 'pcie'].entries()) {
      for (let l = 0; l < levels[g]; l++) names.push(levels[g] === 1 ? base : `${base}#${l}`);
    }
    names.push('fire');
    for (let i = 0; i < count; i++) {
      if (phase[i] >= 0 && !(scan && scan.step[i] > 0)) phase[i] = (group[i] === 1 ? levels[0] : 0) + level[i];
    }
  }
  const fire = names.length - 1;
  const fires = [fire];
  if (scan) {
    // Per level: its copies' sub-phases, then its fire phase.
    const first = new Int32Array(scan.levels);
    for (let l = 1; l < scan.levels; l++) {
      first[l] = names.length;
      const subs = scan.subs[l];
      for (let j = 0; j < subs; j++) names.push(subs === 1 ? `scan#${l}` : `scan#${l}.${j}`);
      fires.push(names.length);
      names.push(`fire#${l}`);
    }
    for (let i = 0; i < count; i++) if (scan.step[i] > 0) phase[i] = first[scan.step[i]] + scan.sub[i];
  }
  // Inside a scan's firing only the cycle's last phase takes the cluster-wide barrier.
  const barrier = names.map((_, f) => f < fire || f === names.length - 1);
  return { names, fire, fires, barrier, phase, link };
}

/**
 * The copies inside scans: by buffer number, the scan level whose copy phase it goes in (0: an
 * ordinary copy) and its depth in a chain of such copies of that level; per level, the most
 * sub-phases. A copy of a scan node's output goes in the earliest level that reads it or a copy
 * of it (a node of the same scan on a later level). Undefined without scans.
 */
function scanCopies(
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
): { step: Int32Array; sub: Int32Array; subs: number[]; levels: number } | undefined {
  let levels = 0;
  for (const n of order) if (n.scan) levels = Math.max(levels, n.scan.level + 1);
  if (levels <= 1) return undefined;
  const count = buffers.count;
  const { children } = table;
  const { consumers } = buffers;
  const step = new Int32Array(count);
  const sub = new Int32Array(count);
  const subs = new Array<number>(levels).fill(0);
  // Depth first from each producer's buffer: `need` (the earliest later level of the source's
  // scan reading the buffer or a copy of it) comes up in post-order, placement goes down after.
  const need = new Int32Array(count).fill(0x7fffffff);
  const stack: number[] = [];
  const tree: number[] = [];
  for (let root = 0; root < count; root++) {
    if (table.parent[root] >= 0) continue;
    const src = order[buffers.source[root]].scan;
    if (!src) continue;
    stack.push(root);
    const from = tree.length;
    while (stack.length) {
      const b = stack.pop()!;
      tree.push(b);
      for (let k = children.start[b]; k < children.start[b + 1]; k++) stack.push(children.list[k]);
    }
    // `tree` holds this root's copies in pre-order: children after their parent.
    for (let x = tree.length - 1; x >= from; x--) {
      const b = tree[x];
      let m = need[b];
      for (let j = consumers.start[b]; j < consumers.start[b + 1]; j++) {
        const c = order[consumers.node[j]].scan;
        if (c && c.node === src.node && c.level > src.level && c.level < m) m = c.level;
      }
      need[b] = m;
      const p = table.parent[b];
      if (p >= 0 && m < need[p]) need[p] = m;
    }
    for (let x = from; x < tree.length; x++) {
      const b = tree[x];
      const p = table.parent[b];
      if (p < 0 || need[b] === 0x7fffffff) continue;
      step[b] = need[b];
      sub[b] = step[p] === step[b] ? sub[p] + 1 : 0;
      subs[step[b]] = Math.max(subs[step[b]], sub[b] + 1);
    }
  }
  return { step, sub, subs, levels };
}

/** The link a transfer uses: the fastest between the two PEs (the router chose the same). */
export function fastestLink(model: Model, a: PeId, b: PeId, bytes: number): Link {
  let best: Link | undefined;
  const pe = model.pe.get(a)!;
  for (let j = 0; j < pe.links.length; j++) {
    if (pe.neighbours[j] !== b) continue;
    const l = pe.links[j];
    const t = l.latency + bytes / l.bandwidth;
    if (!best || t < best.latency + bytes / best.bandwidth) best = l;
  }
  if (!best) throw new Error(`no link between ${a} and ${b}`);
  return best;
}
