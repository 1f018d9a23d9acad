// Transfer lanes: the threads a transfer is drawn on. One lane per direction and peer PE, so
// the two directions of a full-duplex link (a GPU's uploads and read-backs in one overlapped
// cycle) never pile up in one lane. The predictor and the agents both name lanes here, so a
// predicted track sits under its measured one.

export const sendLane = (toPe: string) => `send:${toPe}`;
export const recvLane = (fromPe: string) => `recv:${fromPe}`;
export const isTransferLane = (thread: string) => thread.startsWith('send:') || thread.startsWith('recv:');

/** A lane's label for people: `gpu0@h0 -> cpu@h0` for a send lane, `gpu0@h0 <- cpu@h0` for a receive lane. */
export function laneLabel(pe: string, thread: string): string {
  if (thread === 'main') return pe;
  if (thread.startsWith('send:')) return `${pe} -> ${thread.slice(5)}`;
  if (thread.startsWith('recv:')) return `${pe} <- ${thread.slice(5)}`;
  return `${pe} ${thread}`;
}

export interface LanePe {
  host: string;
  kind: 'cpu' | 'gpu';
}

/**
 * Where a transfer is recorded. A copy between two PEs of one host is driven by the GPU's
 * thread (writeBuffer / mapAsync), so it is drawn on the GPU's PE; a host-to-host transfer is
 * drawn on both ends: the sender's send lane and the receiver's receive lane.
 */
export function transferLanes(fromPe: string, toPe: string, pe: (id: string) => LanePe): { pe: string; thread: string }[] {
  const from = pe(fromPe);
  const to = pe(toPe);
  if (from.host !== to.host) return [{ pe: fromPe, thread: sendLane(toPe) }, { pe: toPe, thread: recvLane(fromPe) }];
  if (to.kind === 'gpu') return [{ pe: toPe, thread: recvLane(fromPe) }];
  return [{ pe: fromPe, thread: sendLane(toPe) }];
}

/**
 * Busy time of one thread as the union of its busy intervals, so concurrent transfers in
 * one lane count once (utilisation never exceeds 100%). Sorts a copy; O(n log n).
 */
export function unionLength(intervals: readonly { start: number; end: number }[]): number {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const { start, end } of sorted) {
    if (start > to) {
      if (to > from) total += to - from;
      from = start;
      to = end;
    } else if (end > to) to = end;
  }
  if (to > from) total += to - from;
  return total;
}
