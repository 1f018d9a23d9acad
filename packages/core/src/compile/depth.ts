import type { Buffers } from './types.js';

/** Slots of one buffer's storage agents take (one SharedArrayBuffer or GPUBuffer each): the deploy check's `maxDepth`. */
export const MAX_DEPTH = 256;

/**
 * Paper 4.2.3: with overlap, a buffer that receives from or sends to another PE is double
 * (the transfer uses one slot while the PE works on the other); otherwise single.
 */
export function assignDepth(buffers: Buffers, overlap: boolean): void {
  const { parent, next, depth } = buffers;
  for (let i = 0; i < buffers.count; i++) depth[i] = overlap && (parent[i] >= 0 || next.start[i + 1] > next.start[i]) ? 2 : 1;
}
