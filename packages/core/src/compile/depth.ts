import type { BufferNode } from './types.js';

/**
 * Paper 4.2.3: with overlap, a buffer that receives from or sends to another PE is double
 * (the transfer uses one slot while the PE works on the other); otherwise single.
 */
export function assignDepth(buffers: BufferNode[], overlap: boolean): void {
  // An index loop: this runs once per compile, mostly before V8 optimises it, and for-of would
  // make an iterator result per buffer there.
  for (let i = 0; i < buffers.length; i++) {
    const b = buffers[i];
    b.depth = overlap && ('buffer' in b.from || b.next.length > 0) ? 2 : 1;
  }
}
