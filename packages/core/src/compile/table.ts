import type { BufferId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { BufferNode } from './types.js';

/**
 * The structure of the buffer list by number (a buffer's position in it), built once per
 * compile: the passes index typed arrays with these numbers instead of each building maps
 * keyed by buffer id, which on a 10,000-node graph cost more than the passes' own work.
 * Holds only what buffer insertion fixed (source, PE, parent); depth and colour stay on the
 * buffers because later passes change them.
 */
export interface BufferTable {
  /** Number of the buffer each one is copied from; -1 for a producer's own buffer. */
  parent: Int32Array;
  /** Index of each buffer's PE in model.pes. */
  pe: Int32Array;
  /** Per edge (by ModelEdge.index): the number of the buffer its consumer reads. */
  read: Int32Array;
  /** Per node (by ModelNode.index): the number of its first output buffer; outputs follow in port order. */
  output: Int32Array;
  /** Copies of each buffer in buffer order (as `next` lists them): children of b are list[start[b] .. start[b + 1]). */
  children: { start: Int32Array; list: Int32Array };
}

/**
 * The table of a buffer list from the buffers alone (insertBuffers builds it as it goes; this
 * is for a list made otherwise).
 */
export function bufferTable(model: Model, buffers: BufferNode[]): BufferTable {
  const n = buffers.length;
  const number = new Map<BufferId, number>();
  for (let i = 0; i < n; i++) number.set(buffers[i].id, i);
  const parent = new Int32Array(n);
  const pe = new Int32Array(n);
  const read = new Int32Array(model.doc.app.edges.length).fill(-1);
  const output = new Int32Array(model.doc.app.nodes.length).fill(-1);
  for (let i = 0; i < n; i++) {
    const b = buffers[i];
    pe[i] = model.pe.get(b.pe)!.index;
    if ('buffer' in b.from) parent[i] = number.get(b.from.buffer)!;
    else {
      parent[i] = -1;
      const source = model.node.get(b.source)!;
      if (output[source.index] < 0) output[source.index] = i;
    }
    for (const c of b.consumers) {
      const n = model.node.get(c.node)!;
      read[n.inputs[n.kernel.inputs.findIndex((p) => p.name === c.port)].index] = i;
    }
  }
  return { parent, pe, read, output, children: childLists(parent) };
}

/** Children lists from parent numbers, as flat arrays (CSR), each list in increasing number. */
export function childLists(parent: Int32Array): BufferTable['children'] {
  const start = new Int32Array(parent.length + 1);
  for (let i = 0; i < parent.length; i++) if (parent[i] >= 0) start[parent[i] + 1]++;
  for (let i = 0; i < parent.length; i++) start[i + 1] += start[i];
  const fill = start.slice(0, parent.length);
  const list = new Int32Array(start[parent.length]);
  for (let i = 0; i < parent.length; i++) if (parent[i] >= 0) list[fill[parent[i]]++] = i;
  return { start, list };
}

/** The empty list, shared by every list still empty (see `push`); frozen, so a write throws. */
export const NONE: never[] = Object.freeze([]) as never[];

/**
 * `list` with x appended, for `obj.list = push(obj.list, x)`. Array.prototype.push gives an
 * empty array 17 slots at its first element; most lists in the IG (a buffer's consumers and
 * copies, a colour's buffers) keep one or two, and on a 35,000-buffer graph those spare slots
 * were a fifth of its memory and of the GC's copying. A first element gets an exact one-slot
 * array instead.
 */
export function push<T>(list: T[], x: T): T[] {
  if (list.length === 0) return [x];
  list.push(x);
  return list;
}
