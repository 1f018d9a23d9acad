/**
 * The structure of the buffer list by number (a buffer's position in it), built once per
 * compile: the passes index typed arrays with these numbers instead of each building maps
 * keyed by buffer id, which on a 10,000-node graph cost more than the passes' own work.
 * Holds only what buffer insertion fixed; `parent`, `pe` and `children` are the same arrays as
 * the IG's buffer columns (types.ts `Buffers`).
 */
export interface BufferTable {
  /** Number of the buffer each one is copied from; -1 for a producer's own buffer. */
  parent: Int32Array;
  /** Index of each buffer's PE in model.pes. */
  pe: Int32Array;
  /** Per edge (by position in app.edges): the number of the buffer its consumer reads. */
  read: Int32Array;
  /** Per edge: where the part it carries starts in that buffer, in bytes (0 for a whole read, or a buffer holding just the part); it reads model.edges.bytes. */
  readOffset: Float64Array;
  /** Per node (by ModelNode.index): the number of its first output buffer; outputs follow in port order. */
  output: Int32Array;
  /** Copies of each buffer in buffer order (as `next` lists them): children of b are list[start[b] .. start[b + 1]). */
  children: { start: Int32Array; list: Int32Array };
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
