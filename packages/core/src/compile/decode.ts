import type { BufferId, PeId } from '../ids.js';
import type { Action, BufferAccess, BufferNode, ImplementationGraph, PeProgram, Programs } from './types.js';

/**
 * The IG's columns (types.ts `Buffers` and `Programs`) read back as objects: a buffer as a
 * `BufferNode` (what the CLI prints and the designer draws), one PE's `PeProgram` (what its
 * agent receives at deploy), and the few summaries the coordinator needs.
 */

/** What reading buffers back needs: the schedule, the buffer columns and the PEs' order. */
export type BufferColumns = Pick<ImplementationGraph, 'order' | 'buffers'> & { programs: { pes: readonly { pe: PeId }[] } };

/** The PE holding buffer k. */
export function bufferPe(ig: BufferColumns, k: number): PeId {
  return ig.programs.pes[ig.buffers.pe[k]].pe;
}

/** The number of buffer `bn_k` (k), or -1 when the IG has no such buffer. */
export function bufferIndex(ig: BufferColumns, id: string): number {
  const k = /^bn_(\d+)$/.test(id) ? Number(id.slice(3)) : -1;
  return k >= 0 && k < ig.buffers.count ? k : -1;
}

/** Buffer k as an object. */
export function bufferNode(ig: BufferColumns, k: number): BufferNode {
  const b = ig.buffers;
  const source = ig.order[b.source[k]];
  const consumers: BufferNode['consumers'] = [];
  for (let i = b.consumers.start[k]; i < b.consumers.start[k + 1]; i++) consumers.push({ node: ig.order[b.consumers.node[i]], port: b.consumers.port[i] });
  const next: BufferId[] = [];
  for (let i = b.next.start[k]; i < b.next.start[k + 1]; i++) next.push(b.id[b.next.list[i]]);
  return {
    id: b.id[k],
    pe: bufferPe(ig, k),
    source,
    port: b.port[k],
    from: b.parent[k] < 0 ? { node: source } : { buffer: b.id[b.parent[k]] },
    type: b.types[b.type[k]],
    bytes: b.bytes[k],
    consumers,
    next,
    depth: b.depth[k],
    color: b.color[k],
  };
}

/** Every buffer as an object, in number order. */
export function bufferNodes(ig: BufferColumns): BufferNode[] {
  const out: BufferNode[] = new Array(ig.buffers.count);
  for (let k = 0; k < out.length; k++) out[k] = bufferNode(ig, k);
  return out;
}

/** One memory colour of a PE: its number, its storage in bytes and the buffers sharing it. */
export interface ColorGroup {
  color: number;
  bytes: number;
  buffers: BufferId[];
}

/**
 * The memory colours of the PEs at the given positions of `ig.programs.pes` (every PE when
 * none are given), each with its buffers in number order: by PE position, an empty list for a
 * PE not asked for. One pass over the buffers, whatever the number of PEs.
 */
export function colorGroups(ig: Pick<ImplementationGraph, 'buffers' | 'memory' | 'programs'>, positions?: Iterable<number>): ColorGroup[][] {
  const pes = ig.programs.pes;
  const out: ColorGroup[][] = new Array(pes.length);
  for (let p = 0; p < pes.length; p++) out[p] = [];
  for (const p of positions ?? pes.keys()) out[p] = (ig.memory[pes[p].pe]?.colorBytes ?? []).map((bytes, color) => ({ color, bytes, buffers: [] }));
  const { count, pe, color, id } = ig.buffers;
  for (let k = 0; k < count; k++) out[pe[k]][color[k]]?.buffers.push(id[k]);
  return out;
}

/** Position of a PE in `ig.programs.pes`, or -1. */
export function programIndex(ig: ImplementationGraph, pe: string): number {
  const pes = ig.programs.pes;
  for (let p = 0; p < pes.length; p++) if (pes[p].pe === pe) return p;
  return -1;
}

/** The program of one PE as its agent runs it. */
export function peProgram(ig: ImplementationGraph, pe: PeId | string): PeProgram {
  const p = programIndex(ig, pe);
  if (p < 0) throw new Error(`no program for PE ${pe}`);
  return programAt(ig, p, new ActionCache(ig), colorGroups(ig, [p])[p]);
}

/** The program of the PE at position p of `ig.programs.pes`. */
function programAt(ig: ImplementationGraph, p: number, cache: ActionCache, colors: ColorGroup[]): PeProgram {
  const { pes, start, list } = ig.programs;
  const info = pes[p];
  const { view, viewOffset } = ig.buffers;
  const allocations = colors.map((c, k) => {
    const depth = info.slots[k];
    const a: PeProgram['allocations'][number] = { color: c.color, bytes: c.bytes / depth, depth, buffers: c.buffers };
    // Views (joins laid out in a base's storage) start at their offset in each slot.
    let offsets: number[] | undefined;
    c.buffers.forEach((id, i) => {
      const b = bufferIndex(ig, id);
      if (view[b] >= 0 && viewOffset[b] !== 0) (offsets ??= new Array(c.buffers.length).fill(0))[i] = viewOffset[b];
    });
    if (offsets) a.offsets = offsets;
    return a;
  });
  const phases = ig.phases.map((name, f) => {
    const slot = p * ig.phases.length + f;
    const actions: Action[] = [];
    for (let i = start[slot]; i < start[slot + 1]; i++) actions.push(cache.action(list[i]));
    return { name, actions, barrier: ig.phaseBarriers?.[f] ?? true };
  });
  const initial = ig.programs.initial?.[p];
  return { pe: info.pe, host: info.host, kind: info.kind, allocations, phases, ...(initial?.length ? { initial } : {}) };
}

/** Every PE's program, keyed by PE in architecture order (a transfer is one object in both of its PEs' programs). */
export function allPrograms(ig: ImplementationGraph): Record<PeId, PeProgram> {
  const out = Object.create(null) as Record<PeId, PeProgram>;
  const cache = new ActionCache(ig);
  const colors = colorGroups(ig);
  ig.programs.pes.forEach(({ pe }, p) => (out[pe] = programAt(ig, p, cache, colors[p])));
  return out;
}

/** The PE programs of the given hosts, in architecture order. */
export function hostPrograms(ig: ImplementationGraph, hosts: Iterable<string>): PeProgram[] {
  const wanted = new Set(hosts);
  const cache = new ActionCache(ig);
  const positions: number[] = [];
  ig.programs.pes.forEach(({ host }, p) => wanted.has(host) && positions.push(p));
  const colors = colorGroups(ig, positions);
  return positions.map((p) => programAt(ig, p, cache, colors[p]));
}

/** The hosts that run a program, sorted. */
export function programHosts(ig: ImplementationGraph): string[] {
  return [...new Set(ig.programs.pes.map((p) => p.host as string))].sort();
}

/** The last cycle in which some action starts (a run lasts this many cycles plus its iterations). */
export function lastStartCycle(ig: ImplementationGraph): number {
  const { list, transfer, fire } = ig.programs;
  let last = 0;
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    last = Math.max(last, a >= 0 ? transfer.startCycle[a] : fire.startCycle[-a - 1]);
  }
  return last;
}

/** The bytes the storage of the PE at position p of `ig.programs.pes` takes (every colour at its largest member, times its slots), and its largest slot. */
export function programBytes(ig: ImplementationGraph, p: number): { total: number; largest: number } {
  const { pe, slots } = ig.programs.pes[p];
  let total = 0;
  let largest = 0;
  (ig.memory[pe]?.colorBytes ?? []).forEach((bytes, k) => {
    total += bytes;
    largest = Math.max(largest, bytes / slots[k]);
  });
  return { total, largest };
}

/**
 * Action objects made once each: a transfer is the same object in both its PEs' programs, and
 * `{buffer, lag}` accesses of lag 0 and 1 are shared by every action making them.
 */
export class ActionCache {
  private readonly made = new Map<number, Action>();
  private readonly lag0: BufferAccess[] = [];
  private readonly lag1: BufferAccess[] = [];
  constructor(private readonly ig: ImplementationGraph) {}

  access(buffer: number, lag: number, offset = 0, bytes = this.ig.buffers.bytes[buffer]): BufferAccess {
    const id = this.ig.buffers.id[buffer];
    // A part of the buffer (a view): its own object, with the range.
    if (offset !== 0 || bytes !== this.ig.buffers.bytes[buffer]) return { buffer: id, lag, offset, bytes };
    if (lag === 0) return (this.lag0[buffer] ??= { buffer: id, lag });
    if (lag === 1) return (this.lag1[buffer] ??= { buffer: id, lag });
    return { buffer: id, lag };
  }

  /** The action a `Programs.list` entry stands for. */
  action(entry: number): Action {
    let a = this.made.get(entry);
    if (!a) this.made.set(entry, (a = entry >= 0 ? this.transfer(entry) : this.fire(-entry - 1)));
    return a;
  }

  private transfer(k: number): Action {
    const { transfer, links } = this.ig.programs;
    const from = transfer.from[k];
    const { bytes, parentOffset } = this.ig.buffers;
    return {
      op: 'transfer',
      // A copy of part of its parent reads just that range.
      from: this.access(from, transfer.lag[k], parentOffset[k], bytes[k]),
      to: this.access(k, 0),
      fromPe: bufferPe(this.ig, from),
      toPe: bufferPe(this.ig, k),
      bytes: this.ig.buffers.bytes[k],
      startCycle: transfer.startCycle[k],
      link: links[transfer.link[k]],
    };
  }

  private fire(s: number): Action {
    const { fire } = this.ig.programs;
    const { port, buffer, lag, offset, bytes } = fire.inputs;
    const inputs: Record<string, BufferAccess> = {};
    let parts: Record<string, BufferAccess[]> | undefined;
    for (let i = fire.inputs.start[s], end = fire.inputs.start[s + 1]; i < end;) {
      let last = i + 1;
      while (last < end && port[last] === port[i]) last++;
      if (last - i === 1) inputs[port[i]] = this.access(buffer[i], lag[i], offset[i], bytes[i]);
      else {
        // An input fed in parts: read as one range of the base where they are laid out as its views.
        const list: BufferAccess[] = [];
        for (let x = i; x < last; x++) list.push(this.access(buffer[x], lag[x], offset[x], bytes[x]));
        (parts ??= {})[port[i]] = list;
        const whole = this.joinedView(i, last);
        if (whole) inputs[port[i]] = whole;
      }
      i = last;
    }
    const outputs: Record<string, BufferAccess> = {};
    for (let i = fire.outputs.start[s]; i < fire.outputs.start[s + 1]; i++) outputs[fire.outputs.port[i]] = this.access(fire.outputs.buffer[i], 0);
    const action: Action = {
      op: 'fire',
      node: this.ig.order[s],
      kernel: fire.kernel[s],
      params: fire.params[s],
      startCycle: fire.startCycle[s],
      inputs,
      outputs,
    };
    if (parts) action.parts = parts;
    return action;
  }

  /**
   * The one read of the parts i .. last - 1 of an input when they are laid out contiguously as
   * views of the first (each a whole buffer, at the offset where it lands, read with one lag);
   * undefined when they must be gathered.
   */
  private joinedView(i: number, last: number): BufferAccess | undefined {
    const { buffer, lag, offset, bytes } = this.ig.programs.fire.inputs;
    const b = this.ig.buffers;
    const base = buffer[i];
    let at = 0;
    for (let x = i; x < last; x++) {
      const k = buffer[x];
      if (offset[x] !== 0 || bytes[x] !== b.bytes[k] || lag[x] !== lag[i]) return undefined;
      if (x === i ? b.view[k] >= 0 : b.view[k] !== base || b.viewOffset[k] !== at) return undefined;
      at += bytes[x];
    }
    return { buffer: b.id[base], lag: lag[i], offset: 0, bytes: at };
  }
}

/** The entries of PE p's actions in phase f (see `Programs.list`). */
export function actionRange(programs: Programs, phases: number, p: number, f: number): [number, number] {
  const slot = p * phases + f;
  return [programs.start[slot], programs.start[slot + 1]];
}
