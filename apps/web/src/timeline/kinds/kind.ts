import type { TraceEvent, TraceKind } from '@pipeloom/core';

/**
 * One kind of trace slice as the timeline shows it: its colour in the key and on the tracks,
 * and what its tooltip adds. Core's trace kinds (fire, transfer, wait, barrier, counter) each have one
 * module; `EVENT_KINDS` lists them in core's kind-code order, which the column store uses.
 */
export interface EventKind {
  readonly id: TraceKind;
  readonly label: string;
  readonly color: string;
  /** Tooltip lines beyond the common ones (name, lane, iteration, duration). */
  details(e: TraceEvent): string[];
}
