import type { Action } from '@pipeloom/core';

// Link emulation (a run's `emulateLinks`): each transfer lasts at least what the document's
// link would take, latency + bytes / bandwidth. The copy itself runs at the machine's speed,
// then the transfer waits out the rest on a timer, so the cores stay free for the firings,
// as a DMA engine leaves a GPU's host free. Timers have millisecond granularity: a transfer
// may last up to about a millisecond longer than its link's time, never shorter. Half-duplex
// links are not serialised here.

type Transfer = Extract<Action, { op: 'transfer' }>;

/** Microseconds the transfer takes on its link. */
export function linkTimeUs(t: Transfer): number {
  return (t.link.latency + t.bytes / t.link.bandwidth) * 1e6;
}

/** Waits until `startUs + linkTimeUs(t)` on the clock `nowUs` (µs). */
export async function holdForLink(t: Transfer, startUs: number, nowUs: () => number): Promise<void> {
  const left = startUs + linkTimeUs(t) - nowUs();
  if (left > 0) await new Promise((r) => setTimeout(r, Math.ceil(left / 1000)));
}
