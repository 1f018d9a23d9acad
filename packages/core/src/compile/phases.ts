import type { PeId } from '../ids.js';
import type { Model } from '../document/model.js';
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
  /** Index of the phase in which nodes fire. */
  fire: number;
  /** By buffer number: the phase of the copy that fills it, -1 for a producer's buffer. */
  phase: Int32Array;
  /** By buffer number: the architecture link its copy crosses (undefined for a producer's buffer). */
  link: (Link | undefined)[];
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
 */
export function planPhases(model: Model, buffers: Buffers, table: BufferTable, overlap: boolean, links?: (Link | undefined)[]): PhasePlan {
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
  for (let i = 0; i < count; i++) {
    const p = table.parent[i];
    if (p < 0) continue;
    link[i] ??= fastestLink(model, model.pes[table.pe[p]].id, model.pes[table.pe[i]].id, buffers.bytes[i]);
    const g = model.pes[table.pe[p]].host === model.pes[table.pe[i]].host ? 1 : 0;
    group[i] = g;
    level[i] = table.parent[p] >= 0 && group[p] === g ? level[p] + 1 : 0;
    levels[g] = Math.max(levels[g], level[i] + 1);
    phase[i] = 0;
  }
  if (overlap) return { names: ['overlap'], fire: 0, phase, link };
  const names: string[] = [];
  for (const [g, base] of ['cpu-cpu', 'pcie'].entries()) {
    for (let l = 0; l < levels[g]; l++) names.push(levels[g] === 1 ? base : `${base}#${l}`);
  }
  names.push('fire');
  for (let i = 0; i < count; i++) {
    if (phase[i] >= 0) phase[i] = (group[i] === 1 ? levels[0] : 0) + level[i];
  }
  return { names, fire: names.length - 1, phase, link };
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
