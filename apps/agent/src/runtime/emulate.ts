import type { Action } from '@pipeloom/core';

// Link emulation (a run's `emulateLinks`): each transfer lasts at least what the document's
// link would take, latency + bytes / bandwidth. The copy itself runs at the machine's speed,
// then the transfer waits out the rest on a timer, so the cores stay free for the firings,
// as a DMA engine leaves a GPU's host free (the last fraction of a millisecond is waited out by
// yielding to the event loop). A transfer lasts its link's time or a little more, never
// less. Half-duplex links are not serialised here.

type Transfer = Extract<Action, { op: 'transfer' }>;

/** Microseconds the transfer takes on its link. */
export function linkTimeUs(t: Transfer): number {
  return (t.link.latency + t.bytes / t.link.bandwidth) * 1e6;
}

/** Waits until `startUs + linkTimeUs(t)` on the clock `nowUs` (µs), never less. */
export async function holdForLink(t: Transfer, startUs: number, nowUs: () => number): Promise<void> {
  const due = startUs + linkTimeUs(t);
  for (let left = due - nowUs(); left > 0; left = due - nowUs()) {
    // Whole milliseconds on a timer (which may fire a little early: the loop's clock is
    // cached), the last fraction by yielding to the event loop until it has passed.
    if (left >= 1000) await new Promise((r) => setTimeout(r, Math.floor(left / 1000)));
    else await new Promise((r) => setImmediate(r));
  }
}
