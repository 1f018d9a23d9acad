import { findKernel } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import type { Model } from './model.js';
import { formatBytes } from '../util/units.js';

// A scan's operator context (reg2d's frames) is replicated: every expanded node of a worker
// reads it, so each worker's PE holds one copy of every context port (one per PE, however
// many of the scan's workers it runs). A copy too big for its PE is the user's mistake of
// the scan, not of some buffer: these checks name the scan node, the context port and the
// worker, with a path to the scan's mapping. Two sources of limits: the document's PE memory
// (validate, before any agent is asked) and what agents report (Coordinator.check: memory and
// the adapter's storage-binding limit, which only a device knows; compile/scan-context.ts reads
// the copies off the implementation graph).

/** An expanded node of a scan (`scan1/local.w3`, `seg/scan1/ks.r2.w5`): the scan's id, the plan key and the worker. */
export function scanNodeOf(id: string): { scan: string; key: string; worker: number } | undefined {
  const m = /^(.+)\/((?:local|prop|[a-z]+\.r\d+)\.w(\d+))$/.exec(id);
  return m ? { scan: m[1], key: m[2], worker: Number(m[3]) } : undefined;
}

/** One context port's copy on one PE. */
export interface ContextCopy {
  scan: string;
  port: string;
  /** The scan's workers on this PE, ascending. */
  workers: number[];
  /** Bytes of one slot (what one binding holds). */
  bytes: number;
  /** Bytes it occupies on the PE (slots included). */
  footprint: number;
  /** Set where the copy only relays the context to the workers' PE `to` (a GPU's data staged on its host's CPU). */
  to?: string;
}

/** The path of a scan's mapping entry for a worker (the whole entry for a scan of one worker). */
function mappingPath(scan: string, worker: number, workers: number): string {
  return workers <= 1 ? `mapping.${scan}` : `mapping.${scan}[${worker}]`;
}

const onWorkers = (workers: number[], pe: string) =>
  workers.length === 1 ? `worker ${workers[0]}'s PE ${pe}` : `the PE ${pe} of workers ${workers.slice(0, -1).join(', ')} and ${workers[workers.length - 1]}`;

const ports = (copies: ContextCopy[]) =>
  copies.length === 1
    ? `context port "${copies[0].port}" (${formatBytes(copies[0].footprint)})`
    : `context ports ${copies.map((c) => `"${c.port}" (${formatBytes(c.footprint)})`).join(', ')}`;

const shrink = (copies: ContextCopy[]) => `shrink the data feeding ${copies.map((c) => `${c.scan}.${c.port}`).join(' and ')}`;

/**
 * The copies of one scan on one PE need more than `memory`: named by scan, port and worker.
 * `total` is everything the PE needs (the copies and its other buffers); `source` says whose
 * figure `memory` is ("in the document", "as agent h1 reports").
 */
export function contextOverMemory(copies: ContextCopy[], pe: string, memory: number, total: number, source: string, scanWorkers: number): Diagnostic {
  const { scan, workers, to } = copies[0];
  const mine = copies.reduce((s, c) => s + c.footprint, 0);
  const alone = mine > memory;
  const where = to ? `, relayed through ${pe} to ${onWorkers(workers, to)},` : ` on ${onWorkers(workers, pe)}`;
  const limit = `${to ? `${pe}'s` : 'its'} memory (${formatBytes(memory)} ${source})`;
  const message = alone
    ? `scan "${scan}": ${ports(copies)}${where} exceeds ${limit}`
    : `scan "${scan}": ${ports(copies)}${where}${to ? '' : ','} with the PE's other buffers (${formatBytes(total)} in all), exceeds ${limit}`;
  const hint = to
    ? `${shrink(copies)}, give ${pe} more memory, or map worker ${workers[0]} to a PE the data reaches another way`
    : `${shrink(copies)}, or map worker ${workers[0]} to a PE with more memory${alone ? '' : ' (or fewer other nodes onto it)'}`;
  return error(mappingPath(scan, workers[0], scanWorkers), message, hint);
}

/** A copy bigger than one storage binding of a device PE. */
export function contextOverBinding(copy: ContextCopy, pe: string, limit: number, scanWorkers: number): Diagnostic {
  return error(
    mappingPath(copy.scan, copy.workers[0], scanWorkers),
    `scan "${copy.scan}": context port "${copy.port}" (${formatBytes(copy.bytes)}) on ${onWorkers(copy.workers, pe)} exceeds its storage-binding limit (maxStorageBufferBindingSize ${formatBytes(limit)}): a kernel binds the whole context`,
    `${shrink([copy])}, or map worker ${copy.workers[0]} to a PE with a larger binding limit (a CPU PE has none)`,
  );
}

/** The scan contract's data ports (plan.ts's modes); an operator's every other input is context (as document/scan.ts reads it). */
const DATA_PORTS = new Set(['a', 'b', 'in', 'prefix', 'block']);

/** Whether input `port` of a node of kernel `kernel` reads a scan operator's context. */
export function isContext(kernel: string | { binary?: unknown }, port: string): boolean {
  const spec = typeof kernel === 'string' ? findKernel(kernel) : kernel;
  return spec?.binary !== undefined && !DATA_PORTS.has(port);
}

/** Workers per scan in a list of node ids (a scan has one local node per worker). */
export function workerCounts(ids: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of ids) {
    const s = scanNodeOf(id);
    if (s?.key.startsWith('local.')) out.set(s.scan, (out.get(s.scan) ?? 0) + 1);
  }
  return out;
}

/** Copies by scan (and relay target), in first-seen order. */
export function byScan(copies: Map<string, ContextCopy>): ContextCopy[][] {
  const groups = new Map<string, ContextCopy[]>();
  for (const c of copies.values()) {
    const key = `${c.scan}\0${c.to ?? ''}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(c);
  }
  return [...groups.values()];
}

export function addCopy(copies: Map<string, ContextCopy>, scan: string, port: string, worker: number, bytes: number, footprint: number, to?: string): void {
  const key = `${scan}\0${port}\0${to ?? ''}`;
  const c = copies.get(key);
  if (!c) copies.set(key, to ? { scan, port, workers: [worker], bytes, footprint, to } : { scan, port, workers: [worker], bytes, footprint });
  else if (!c.workers.includes(worker)) c.workers = [...c.workers, worker].sort((a, b) => a - b);
}

/**
 * Compile time, against the document's PE memory: per scan and PE, one slot of each context
 * port (the least the PE must hold; the buffer passes may add a second slot and other buffers,
 * which the compiler's capacity check and Coordinator.check then count).
 */
export function modelContextProblems(model: Model): Diagnostic[] {
  const { nodes, edges, inputs, pes } = model;
  const perPe = new Map<number, Map<string, ContextCopy>>();
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (!n.kernel.binary || n.peIndex < 0) continue;
    const s = scanNodeOf(n.id);
    if (!s) continue;
    for (let j = inputs.start[i]; j < inputs.start[i + 1]; j++) {
      const e = inputs.edge[j];
      if (!isContext(n.kernel, edges.toPort[e])) continue;
      const copies = perPe.get(n.peIndex) ?? perPe.set(n.peIndex, new Map()).get(n.peIndex)!;
      addCopy(copies, s.scan, edges.toPort[e], s.worker, edges.bytes[e], edges.bytes[e]);
    }
  }
  if (!perPe.size) return [];
  const counts = workerCounts(nodes.map((n) => n.id));
  const out: Diagnostic[] = [];
  for (const [pi, copies] of perPe) {
    const pe = pes[pi];
    for (const group of byScan(copies)) {
      const need = group.reduce((s, c) => s + c.footprint, 0);
      if (need > pe.memory) out.push(contextOverMemory(group, pe.id, pe.memory, need, 'in the document', counts.get(group[0].scan) ?? 1));
    }
  }
  return out;
}
