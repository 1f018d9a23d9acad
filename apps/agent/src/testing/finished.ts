import type { ImplementationGraph, TraceEvent } from '@pipeloom/core';
import { hostPrograms } from '@pipeloom/core/internal';

// What a run's trace must hold once it has got past a cycle: every firing, transfer and
// barrier of the earlier cycles had finished on every host (a barrier closes each cycle), so a
// run that fails or is stopped later keeps them all. Events are compared by key, so the
// measured trace (TraceEvent) and the written one (Chrome JSON) use the same expectations.

/** One event as the tests compare it: host, kind, what (barrier: PE and phase; fire: node; transfer: destination buffer), cycle. */
export const eventKey = (host: string, kind: string, what: string, cycle: number) => `${host} ${kind} ${what} @${cycle}`;

export function traceKey(e: TraceEvent): string {
  const what = e.kind === 'barrier' ? `${e.pe} ${e.name}` : e.kind === 'fire' ? (e.node ?? e.name) : (e.buffer ?? e.name);
  return eventKey(e.host, e.kind, what, e.cycle);
}

/** Keys of the events of `host` in cycles 0 .. cycles-1 of a run of `iterations` iterations. */
export function finishedBefore(ig: ImplementationGraph, host: string, cycles: number, iterations: number): string[] {
  const out = new Set<string>();
  for (const program of hostPrograms(ig, [host])) {
    for (let k = 0; k < cycles; k++) {
      for (const phase of program.phases) {
        if (phase.barrier) out.add(eventKey(host, 'barrier', `${program.pe} barrier ${phase.name}`, k));
        for (const a of phase.actions) {
          if (a.op === 'barrier' || k - a.startCycle < 0 || k - a.startCycle >= iterations) continue;
          if (a.op === 'fire') out.add(eventKey(host, 'fire', a.node, k));
          // Traced once on the host (by the PE that drives it), on each side between hosts.
          else out.add(eventKey(host, 'transfer', a.to.buffer, k));
        }
      }
    }
  }
  return [...out].sort();
}

/** The expected keys missing from `have`. */
export function missing(expected: readonly string[], have: Iterable<string>): string[] {
  const got = new Set(have);
  return expected.filter((k) => !got.has(k));
}
