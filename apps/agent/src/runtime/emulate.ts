import type { Action } from '@pipeloom/core';

// Link and device emulation (a run's `emulateLinks` and `emulateDevices`): each transfer
// lasts at least what the document's link would take, latency + bytes / bandwidth, and each
// GPU firing at least its calibrated or cost-hint time. The copy or kernel itself runs at the
// machine's speed, then the rest is waited out on a timer, so the cores stay free for the
// others, as a DMA engine leaves a GPU's host free and a real GPU computes without a host core
// (the last fraction of a millisecond is waited out by yielding to the event loop). It lasts
// its time or a little more, never less. Half-duplex links are not serialised here.

type Transfer = Extract<Action, { op: 'transfer' }>;

/** Microseconds the transfer takes on its link. */
export function linkTimeUs(t: Transfer): number {
  return (t.link.latency + t.bytes / t.link.bandwidth) * 1e6;
}

/** Waits until `startUs + linkTimeUs(t)` on the clock `nowUs` (µs), never less. */
export function holdForLink(t: Transfer, startUs: number, nowUs: () => number): Promise<void> {
  return holdUntil(startUs + linkTimeUs(t), nowUs);
}

/** Waits until `dueUs` on the clock `nowUs` (µs), never less, using no core meanwhile. */
export async function holdUntil(dueUs: number, nowUs: () => number): Promise<void> {
  for (let left = dueUs - nowUs(); left > 0; left = dueUs - nowUs()) {
    // Whole milliseconds on a timer (which may fire a little early: the loop's clock is
    // cached), the last fraction by yielding to the event loop until it has passed.
    if (left >= 1000) await new Promise((r) => setTimeout(r, Math.floor(left / 1000)));
    else await new Promise((r) => setImmediate(r));
  }
}
