import { hostId, type NodeId, type PeId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { LatencyResult } from './latency.js';
import type { PhasePlan } from './phases.js';
import { bufferTable } from './table.js';
import type { Action, BufferAccess, BufferNode, MemoryReport, PeProgram } from './types.js';

/**
 * Paper 4.3, the per-cycle program of each PE. Every PE gets the same phase list (phases
 * empty on this PE included) so the cluster-wide barrier at the end of each phase lines up. A transfer
 * appears in the programs of both PEs it connects (one shared object): the sender's agent
 * sends, the receiver's receives. With overlap the transfers are listed first (launched
 * asynchronously), then the firings in schedule order; without, each phase holds only its
 * transfers or, in `fire`, the PE's firings in schedule order (see phases.ts for the order
 * and latency.ts for why it makes the latencies exact).
 *
 * Slots: in cycle k an access uses slot (k - lag) mod depth. Writers have lag 0. A copy
 * reading a buffer a firing wrote in an earlier cycle has lag 1; a copy after the copy that
 * filled its source in the same cycle (no overlap) has lag 0; a firing reads with lag
 * `its start cycle - the cycle iteration 0 was written` (0 after a local producer or a
 * non-overlapped copy, 1 after an overlapped copy, more when kept for a late sibling input).
 */
export function buildPrograms(model: Model, order: NodeId[], buffers: BufferNode[], plan: PhasePlan, lat: LatencyResult, memory: Record<PeId, MemoryReport>, table = bufferTable(model, buffers)): Record<PeId, PeProgram> {
  const programs = Object.create(null) as Record<PeId, PeProgram>;
  // One link summary per architecture link, shared by every transfer crossing it.
  const links = new Map<Link, TransferLink>();
  // Slots of each colour: its deepest member's depth (by PE index, then colour). Every colour
  // has a member of depth >= 1; starting at 0 keeps the depths small integers (V8 boxes a
  // field once any value stored in it is a double such as -Infinity).
  const slots: number[][] = model.pes.map((pe) => memory[pe.id].colors.map(() => 0));
  for (let i = 0; i < buffers.length; i++) {
    const s = slots[table.pe[i]];
    s[buffers[i].color] = Math.max(s[buffers[i].color], buffers[i].depth);
  }
  for (const pe of model.pes) {
    const allocations = memory[pe.id].colors.map((c, k) => {
      const depth = slots[pe.index][k];
      return { color: c.color, bytes: c.bytes / depth, depth, buffers: c.buffers };
    });
    programs[pe.id] = {
      pe: pe.id,
      host: hostId(pe.host),
      kind: pe.kind,
      allocations,
      phases: plan.names.map((name) => ({ name, actions: [] as Action[], barrier: true })),
    };
  }
  for (let i = 0; i < buffers.length; i++) {
    const phase = plan.phase[i];
    if (phase < 0) continue;
    const to = buffers[i];
    const from = buffers[table.parent[i]];
    // One action in both PEs' programs: the sender's agent sends, the receiver's receives.
    // Programs are read-only plans, so the two share it (a copy each was a third of the
    // programs' objects on a 10,000-node graph).
    const action: Action = {
      op: 'transfer',
      from: lat.accesses.of(table.parent[i], lat.transferLag[i]),
      to: lat.accesses.of(i, 0),
      fromPe: from.pe,
      toPe: to.pe,
      bytes: to.bytes,
      startCycle: lat.transferStart[i],
      link: linkOf(plan.link[i]!),
    };
    programs[from.pe].phases[phase].actions.push(action);
    programs[to.pe].phases[phase].actions.push(action);
  }
  for (const id of order) {
    const n = model.node.get(id)!;
    const outs: Record<string, BufferAccess> = {};
    const first = table.output[n.index];
    const ports = n.kernel.outputs;
    for (let j = 0; j < ports.length; j++) outs[ports[j].name] = lat.accesses.of(first + j, 0);
    programs[n.pe].phases[plan.fire].actions.push({
      op: 'fire',
      node: id,
      kernel: n.kernel.id,
      // The model's params (analyze() made them per node, defaults filled): read-only from here.
      params: n.params,
      startCycle: lat.latency[id],
      inputs: lat.inputs.get(id)!,
      outputs: outs,
    });
  }
  return programs;

  function linkOf(l: Link): TransferLink {
    let summary = links.get(l);
    if (!summary) links.set(l, (summary = { kind: l.kind, bandwidth: l.bandwidth, latency: l.latency }));
    return summary;
  }
}

type TransferLink = Extract<Action, { op: 'transfer' }>['link'];
