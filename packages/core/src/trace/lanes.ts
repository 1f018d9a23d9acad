import type { ImplementationGraph } from '../compile/types.js';

// Transfer lanes: the threads a transfer is drawn on. One lane per direction and peer PE, so
// the two directions of a full-duplex link (a GPU's uploads and read-backs in one overlapped
// cycle) never pile up in one lane. The predictor and the agents both name lanes here, so a
// predicted track sits under its measured one.

export const sendLane = (toPe: string) => `send:${toPe}`;
export const recvLane = (fromPe: string) => `recv:${fromPe}`;
export const isTransferLane = (thread: string) => thread.startsWith('send:') || thread.startsWith('recv:');

/**
 * A lane's label for people: `gpu0@h0 -> cpu@h0` for a send lane, `gpu0@h0 <- cpu@h0` for a
 * receive lane; with `peOf` (what each PE is), a copy between two CPU PEs of one host says so:
 * `cpu0@h0 -> cpu1@h0 (memory)`.
 */
export function laneLabel(pe: string, thread: string, peOf?: (id: string) => LanePe | undefined): string {
  if (thread === 'main') return pe;
  const memory = peOf && isMemoryLane(pe, thread, peOf) ? ' (memory)' : '';
  if (thread.startsWith('send:')) return `${pe} -> ${thread.slice(5)}${memory}`;
  if (thread.startsWith('recv:')) return `${pe} <- ${thread.slice(5)}${memory}`;
  return `${pe} ${thread}`;
}

/** Whether a lane carries copies between two CPU PEs of one host (through its memory, no link outside it). */
export function isMemoryLane(pe: string, thread: string, peOf: (id: string) => LanePe | undefined): boolean {
  if (!isTransferLane(thread)) return false;
  const a = peOf(pe);
  const b = peOf(thread.slice(5));
  return a !== undefined && b !== undefined && a.kind === 'cpu' && b.kind === 'cpu' && a.host === b.host;
}

/** What each PE of a graph is, for laneLabel and isMemoryLane. */
export function graphPes(ig: ImplementationGraph): (id: string) => LanePe | undefined {
  const byId = new Map<string, LanePe>(ig.programs.pes.map((p) => [p.pe as string, { host: p.host as string, kind: p.kind }]));
  return (id) => byId.get(id);
}

/** A lane's name in text (the run summary's threads, the CSV and Paje exports): `gpu0@h0 main`, `gpu0@h0 send:cpu@h1`; unique across a trace. */
export const laneName = (pe: string, thread: string) => `${pe} ${thread}`;

export interface LanePe {
  host: string;
  kind: 'cpu' | 'gpu';
}

/**
 * Where a transfer is recorded. A copy between a CPU and a GPU of one host is driven by the
 * GPU's thread (writeBuffer / mapAsync), so it is drawn on the GPU's PE; a copy between two CPU
 * PEs of one host (through its memory) on the sender's send lane, its own lane per receiver
 * (`cpu0@h0 -> cpu1@h0 (memory)`). Two threads drive the
 * others, and they are drawn on both ends, the sender's send lane and the receiver's receive
 * lane: a host-to-host transfer, and a GPU-to-GPU copy of one host (staged through host
 * memory: the source GPU reads back, the destination uploads; agent runtime/staging.ts).
 */
export function transferLanes(fromPe: string, toPe: string, pe: (id: string) => LanePe): { pe: string; thread: string }[] {
  const from = pe(fromPe);
  const to = pe(toPe);
  if (from.host !== to.host || (from.kind === 'gpu' && to.kind === 'gpu'))
    return [
      { pe: fromPe, thread: sendLane(toPe) },
      { pe: toPe, thread: recvLane(fromPe) },
    ];
  if (to.kind === 'gpu') return [{ pe: toPe, thread: recvLane(fromPe) }];
  return [{ pe: fromPe, thread: sendLane(toPe) }];
}

export interface TraceLaneKey {
  host: string;
  pe: string;
  thread: string;
}

/**
 * Every lane a run of this graph draws on, predicted or measured: each PE's main thread and
 * the lanes of each transfer, ordered host, PE, then thread (main first), as the timeline
 * draws them. The Chrome export numbers processes and threads from this list, so the predicted
 * and the measured trace of a document agree.
 */
export function graphLanes(ig: ImplementationGraph): TraceLaneKey[] {
  const pes = ig.programs.pes;
  const pe = graphPes(ig);
  const out = new Map<string, TraceLaneKey>();
  const add = (host: string, pe: string, thread: string) => out.set(`${pe}\u0000${thread}`, { host, pe, thread });
  for (const p of pes) add(p.host, p.pe, 'main');
  const { from } = ig.programs.transfer;
  for (let k = 0; k < from.length; k++) {
    if (from[k] < 0) continue;
    for (const l of transferLanes(pes[ig.buffers.pe[from[k]]].pe, pes[ig.buffers.pe[k]].pe, (id) => pe(id)!)) add(pe(l.pe)!.host, l.pe, l.thread);
  }
  return [...out.values()].sort(compareLanes);
}

/** Lane order: host, PE, then thread with 'main' first (TraceColumns.lanes() sorts alike). */
export function compareLanes(a: TraceLaneKey, b: TraceLaneKey): number {
  const rank = (t: string) => (t === 'main' ? '' : t);
  return cmp(a.host, b.host) || cmp(a.pe, b.pe) || cmp(rank(a.thread), rank(b.thread));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
