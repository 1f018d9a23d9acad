import { hostId, type PeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { LatencyResult } from './latency.js';
import { firePhase, type PhasePlan } from './phases.js';
import { successorLists } from '../util/csr.js';
import type { BufferTable } from './table.js';
import type { AccessList, Buffers, MemoryReport, Programs, TransferLink } from './types.js';

/**
 * Paper 4.3, the per-cycle program of each PE, as the compact `Programs` table (types.ts):
 * compile/decode.ts expands one PE's into the `PeProgram` its agent runs. Every PE gets the
 * same phase list (phases empty on this PE included) so the cluster-wide barrier at the end of
 * each phase lines up. A transfer appears in the programs of both PEs it connects: the
 * sender's agent sends, the receiver's receives. With overlap the transfers are listed first
 * (launched asynchronously), then the firings in schedule order; without, each phase holds
 * only its transfers or, in `fire`, the PE's firings in schedule order (see phases.ts for the
 * order and latency.ts for why it makes the latencies exact); a scan's levels fire in their
 * own phases `fire#1`, `fire#2`, ... after it, each PE's in schedule order.
 *
 * Slots: in cycle k an access uses slot (k - lag) mod depth. Writers have lag 0. A copy
 * reading a buffer a firing wrote in an earlier cycle has lag 1; a copy after the copy that
 * filled its source in the same cycle (no overlap) has lag 0; a firing reads with lag
 * `its start cycle - the cycle iteration 0 was written` (0 after a local producer or a
 * non-overlapped copy, 1 after an overlapped copy, more when kept for a late sibling input).
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function buildPrograms(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  plan: PhasePlan,
  lat: LatencyResult,
  memory: Record<PeId, MemoryReport>,
): Programs {
  const count = buffers.count;
  const { color, depth } = buffers;
  const phases = plan.names.length;
  // Slots of each colour: its deepest member's depth (by PE index, then colour). Every colour
  // has a member of depth >= 1.
  const slots = model.pes.map((pe) => new Int32Array(memory[pe.id].colorBytes.length));
  for (let i = 0; i < count; i++) {
    const s = slots[table.pe[i]];
    s[color[i]] = Math.max(s[color[i]], depth[i]);
  }
  const pes = model.pes.map((pe) => ({ pe: pe.id, host: hostId(pe.host), kind: pe.kind, slots: slots[pe.index] }));

  // The transfers, by the number of the buffer each fills; one summary per architecture link.
  const from = new Int32Array(count).fill(-1);
  const lag = new Int32Array(count);
  const startCycle = new Int32Array(count);
  const linkOf = new Int32Array(count).fill(-1);
  const links: TransferLink[] = [];
  const linkIndex = new Map<Link, number>();
  for (let i = 0; i < count; i++) {
    if (plan.phase[i] < 0) continue;
    from[i] = table.parent[i];
    lag[i] = lat.transferLag[i];
    startCycle[i] = lat.transferStart[i];
    const l = plan.link[i]!;
    let k = linkIndex.get(l);
    if (k === undefined) {
      linkIndex.set(l, (k = links.length));
      links.push({ kind: l.kind, bandwidth: l.bandwidth, latency: l.latency });
    }
    linkOf[i] = k;
  }

  // The action lists, as (PE, phase) slot -> entry pairs grouped by slot, in the order the
  // agents run them: each slot's transfers in buffer order (listed at both ends), then its
  // firings in schedule order.
  let transfers = 0;
  for (let i = 0; i < count; i++) if (plan.phase[i] >= 0) transfers++;
  const slot = new Int32Array(2 * transfers + order.length);
  const entry = new Int32Array(slot.length);
  let e = 0;
  for (let i = 0; i < count; i++) {
    const f = plan.phase[i];
    if (f < 0) continue;
    slot[e] = table.pe[table.parent[i]] * phases + f;
    entry[e++] = i;
    slot[e] = table.pe[i] * phases + f;
    entry[e++] = i;
  }
  for (let s = 0; s < order.length; s++) {
    slot[e] = order[s].peIndex * phases + firePhase(plan, order[s]);
    entry[e++] = -s - 1;
  }
  const { start, succ: list } = successorLists(model.pes.length * phases, slot, entry);

  // The firings, by schedule position.
  const kernel: string[] = new Array(order.length);
  const params: Programs['fire']['params'] = new Array(order.length);
  const fireStart = new Int32Array(order.length);
  const requires: Programs['fire']['requires'] = order.map((n) => n.requires);
  let inputCount = 0;
  let outputCount = 0;
  for (const n of order) {
    // Every part of an input fed in parts is an item.
    inputCount += fedCount(model, n);
    outputCount += n.kernel.outputs.length;
  }
  const inputs = accessList(order.length, inputCount);
  const fed = model.inputs;
  const outputs = accessList(order.length, outputCount);
  for (let s = 0, i = 0, o = 0; s < order.length; s++) {
    const n = order[s];
    kernel[s] = n.kernel.id;
    // The model's params (analyze() made them per node, defaults filled): read-only from here.
    params[s] = n.params;
    fireStart[s] = lat.start[s];
    for (let k = fed.start[n.index]; k < fed.start[n.index + 1]; k++) {
      const e = fed.edge[k];
      inputs.port[i] = model.edges.toPort[e];
      inputs.buffer[i] = table.read[e];
      inputs.offset[i] = table.readOffset[e];
      inputs.bytes[i] = model.edges.bytes[e];
      inputs.origin[i] = model.edges.fromOffset[e];
      inputs.delay[i] = model.edges.delay[e];
      inputs.lag[i++] = lat.inputLag[e];
    }
    inputs.start[s + 1] = i;
    const ports = n.kernel.outputs;
    for (let j = 0; j < ports.length; j++) {
      outputs.port[o] = ports[j].name;
      outputs.bytes[o] = buffers.bytes[table.output[n.index] + j];
      outputs.buffer[o++] = table.output[n.index] + j;
    }
    outputs.start[s + 1] = o;
  }
  return {
    pes,
    start,
    list,
    transfer: { from, lag, startCycle, link: linkOf },
    links,
    fire: { kernel, params, startCycle: fireStart, inputs, outputs, requires },
  };
}

function accessList(owners: number, items: number): AccessList {
  return {
    start: new Int32Array(owners + 1),
    port: new Array(items),
    buffer: new Int32Array(items),
    lag: new Int32Array(items),
    offset: new Float64Array(items),
    bytes: new Float64Array(items),
    origin: new Float64Array(items),
    delay: new Int32Array(items),
  };
}

/** The edges feeding node n's inputs (one per port, or one per part). */
function fedCount(model: Model, n: ModelNode): number {
  return model.inputs.start[n.index + 1] - model.inputs.start[n.index];
}
