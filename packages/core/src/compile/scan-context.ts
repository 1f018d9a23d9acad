import { addCopy, byScan, isContext, scanNodeOf, workerCounts, type ContextCopy } from '../document/scan-context.js';
import type { ImplementationGraph } from './types.js';

// A scan's replicated context as the implementation graph places it, for the checks against
// what agents report (document/scan-context.ts names the problems).

/**
 * Run time: the scan context copies the PE at position `p` of `ig.programs.pes` holds, grouped
 * by scan, and each scan's worker count. A buffer no scan node on `p` reads, copied on to PEs
 * where scan nodes read it as context, is a relay of that context (`to`).
 */
export function igContextCopies(ig: ImplementationGraph, p: number): { groups: ContextCopy[][]; workers: Map<string, number> } {
  const { buffers, order, programs } = ig;
  const copies = new Map<string, ContextCopy>();
  /** The scan context reads of buffer k on its own PE: scan, port, worker. */
  const reads = (k: number) => {
    const out: { scan: string; port: string; worker: number }[] = [];
    for (let i = buffers.consumers.start[k]; i < buffers.consumers.start[k + 1]; i++) {
      const s = buffers.consumers.node[i];
      const port = buffers.consumers.port[i];
      const at = isContext(programs.fire.kernel[s], port) ? scanNodeOf(order[s]) : undefined;
      if (at) out.push({ scan: at.scan, port, worker: at.worker });
    }
    return out;
  };
  for (let k = 0; k < buffers.count; k++) {
    if (buffers.pe[k] !== p) continue;
    const bytes = buffers.bytes[k];
    const footprint = bytes * buffers.depth[k];
    const own = reads(k);
    for (const r of own) addCopy(copies, r.scan, r.port, r.worker, bytes, footprint);
    if (own.length || buffers.consumers.start[k + 1] > buffers.consumers.start[k]) continue;
    // A relay: follow its copies downstream (a tree: each buffer has one parent) to the readers.
    const stack = [k];
    for (let guard = 0; stack.length && guard < buffers.count; guard++) {
      const b = stack.pop()!;
      for (let j = buffers.next.start[b]; j < buffers.next.start[b + 1]; j++) {
        const n = buffers.next.list[j];
        for (const r of reads(n)) addCopy(copies, r.scan, r.port, r.worker, bytes, footprint, programs.pes[buffers.pe[n]].pe);
        stack.push(n);
      }
    }
  }
  return { groups: byScan(copies), workers: copies.size ? workerCounts(order) : new Map() };
}
