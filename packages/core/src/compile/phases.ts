import type { PeId, BufferId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { BufferNode } from './types.js';

/** One copy between buffers on two linked PEs: the edge of the IG between consecutive buffers. */
export interface Transfer {
  from: BufferId;
  to: BufferId;
  fromPe: PeId;
  toPe: PeId;
  bytes: number;
  link: Link;
  /** Index into the phase list. */
  phase: number;
}

export interface PhasePlan {
  names: string[];
  /** Index of the phase in which nodes fire. */
  fire: number;
  /** Transfers in buffer order (one per buffer copied from another). */
  transfers: Transfer[];
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
 * host-to-host before host-to-GPU is what makes the P-I-I-C cycle T = Th + Tib + a*n.
 */
export function planPhases(model: Model, buffers: BufferNode[], overlap: boolean, links?: Map<BufferId, Link>): PhasePlan {
  const byId = new Map(buffers.map((b) => [b.id, b]));
  const pending: { t: Omit<Transfer, 'phase'>; group: 0 | 1; level: number }[] = [];
  const writer = new Map<BufferId, { group: 0 | 1; level: number }>();
  for (const b of buffers) {
    if (!('buffer' in b.from)) continue;
    const src = byId.get(b.from.buffer)!;
    const link = links?.get(b.id) ?? fastestLink(model, src.pe, b.pe, b.bytes);
    const group: 0 | 1 = model.pe.get(src.pe)!.host === model.pe.get(b.pe)!.host ? 1 : 0;
    const w = writer.get(src.id);
    const level = w && w.group === group ? w.level + 1 : 0;
    writer.set(b.id, { group, level });
    pending.push({ t: { from: src.id, to: b.id, fromPe: src.pe, toPe: b.pe, bytes: b.bytes, link }, group, level });
  }
  if (overlap) return { names: ['overlap'], fire: 0, transfers: pending.map(({ t }) => Object.assign(t, { phase: 0 })) };
  const levels = [1, 1];
  for (const p of pending) levels[p.group] = Math.max(levels[p.group], p.level + 1);
  const names: string[] = [];
  for (const [g, base] of ['cpu-cpu', 'pcie'].entries()) {
    for (let l = 0; l < levels[g]; l++) names.push(levels[g] === 1 ? base : `${base}#${l}`);
  }
  names.push('fire');
  const transfers = pending.map(({ t, group, level }) => Object.assign(t, { phase: (group === 1 ? levels[0] : 0) + level }));
  return { names, fire: names.length - 1, transfers };
}

/** The link a transfer uses: the fastest between the two PEs (the router chose the same). */
export function fastestLink(model: Model, a: PeId, b: PeId, bytes: number): Link {
  let best: Link | undefined;
  for (const l of model.pe.get(a)!.links) {
    if (l.to !== b) continue;
    const t = l.link.latency + bytes / l.link.bandwidth;
    if (!best || t < best.latency + bytes / best.bandwidth) best = l.link;
  }
  if (!best) throw new Error(`no link between ${a} and ${b}`);
  return best;
}
