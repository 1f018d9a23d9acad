import type { ImplementationGraph } from '../compile/types.js';
import type { ProjectDocument, SyncMode } from '../document/types.js';
import { documentHash } from '../document/hash.js';
import type { TraceEvent } from './event.js';
import { dataFlows, exportLanes } from './flows.js';
import { graphPes, laneLabel } from './lanes.js';

// Chrome Trace Event JSON, which Perfetto and chrome://tracing open: one process per host,
// one thread per PE thread (its main thread and one lane per peer), complete (`X`) events in
// microseconds, counter (`C`) events for sampled values (the task bag's depth), metadata
// naming processes and threads, and flow arrows along the data. trace/chrome-read.ts reads it
// back to the same events.

export interface ChromeEvent {
  name: string;
  ph: 'X' | 'C' | 'M' | 's' | 'f';
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  cat?: string;
  id?: number;
  bp?: 'e';
  args?: Record<string, unknown>;
}

export interface ChromeTrace {
  traceEvents: ChromeEvent[];
  displayTimeUnit: 'ms';
  /** What the trace is of (Perfetto shows it under the trace's info). */
  metadata?: TraceMetadata;
}

/** Which run or prediction a trace shows, so a trace file says what it is on its own. */
export interface TraceMetadata {
  source: 'predicted' | 'measured';
  /** The document's name and hash (run/calibration.ts documentHash). */
  document: { name: string; hash: string };
  strategy: 'overlap' | 'no-overlap';
  sync: 'self-timed' | 'barrier';
  /** The calibration the prediction used (its file or date), or 'none' for the cost hints. */
  calibration: string;
  /** Host -> the version of the agent that ran it (measured traces; 'unknown' for agents that do not say). */
  agents?: Record<string, string>;
}

/**
 * A trace's metadata for a document: its hash, the strategy, the sync mode (barrier where the
 * run options do not say), the calibration used and, for a measured trace, each host's agent.
 */
export function traceMetadata(
  doc: ProjectDocument,
  o: { source: TraceMetadata['source']; overlap: boolean; sync?: SyncMode; calibration?: string; agents?: readonly { host: string; agentVersion?: string }[] },
): TraceMetadata {
  const m: TraceMetadata = {
    source: o.source,
    document: { name: doc.name, hash: documentHash(doc) },
    strategy: o.overlap ? 'overlap' : 'no-overlap',
    sync: o.sync ?? 'barrier',
    calibration: o.calibration ?? 'none',
  };
  if (o.agents) {
    // Keyed by host ids: no prototype, so a host named "__proto__" is a host.
    const agents: Record<string, string> = Object.create(null);
    for (const a of o.agents) agents[a.host] = a.agentVersion ?? 'unknown';
    m.agents = agents;
  }
  return m;
}

/**
 * Converts trace events. With the implementation graph, flow arrows run producer firing ->
 * transfers -> consumer firings of the same iteration; without it, from each transfer to the
 * next transfer of the same data. Processes (hosts) and threads (lanes) are numbered from the
 * graph's lanes (trace/lanes.ts graphLanes), so a predicted and a measured trace of one
 * graph number them alike; without it, from the lanes the events use, in the same order.
 */
export function toChromeTrace(events: readonly TraceEvent[], ig?: ImplementationGraph, metadata?: TraceMetadata): ChromeTrace {
  const out: ChromeEvent[] = [];
  const pids = new Map<string, number>();
  const tids = new Map<string, number>();
  const peOf = ig ? graphPes(ig) : undefined;
  for (const l of exportLanes(events, ig)) {
    let pid = pids.get(l.host);
    if (pid === undefined) {
      pids.set(l.host, (pid = pids.size + 1));
      out.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `host ${l.host}` } });
    }
    const tid = tids.size + 1;
    tids.set(`${l.pe}\u0000${l.thread}`, tid);
    // pe and thread beside the label: a reader gets the lane back exactly (viewers show `name`).
    out.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name: laneLabel(l.pe, l.thread, peOf), pe: l.pe, thread: l.thread } });
    out.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
  }
  const placed = events.map((e) => ({ e, pid: pids.get(e.host)!, tid: tids.get(`${e.pe}\u0000${e.thread}`)! }));
  for (const { e, pid, tid } of placed) {
    if (e.kind === 'counter') {
      // Viewers plot every argument of a `C` event as a series, so the value goes alone: a
      // counter sample has iteration and cycle -1 and ends where it starts (trace/event.ts).
      out.push({ name: e.name, cat: e.kind, ph: 'C', pid, tid, ts: e.start, args: { value: e.value ?? 0 } });
      continue;
    }
    const args: Record<string, unknown> = { iteration: e.iteration, cycle: e.cycle };
    if (e.node) args.node = e.node;
    if (e.buffer) args.buffer = e.buffer;
    if (e.from) args.from = e.from;
    if (e.bytes !== undefined) args.bytes = e.bytes;
    if (e.task) {
      args.task = e.task.id;
      if (e.task.share !== undefined) args.share = e.task.share;
      args.attempt = e.task.attempt;
    }
    const dur = Math.max(0, e.end - e.start);
    // start + (end - start) is not always end in floating point (nor for a clock that stepped back): then the end goes too, so a reader gets it exactly.
    if (e.start + dur !== e.end) args.end = e.end;
    out.push({ name: e.name, cat: e.kind, ph: 'X', pid, tid, ts: e.start, dur, args });
  }
  // Flow arrows: who reads the data an event wrote, in the same iteration (trace/flows.ts).
  let flow = 0;
  for (const [i, j] of dataFlows(events, ig)) {
    const a = placed[i];
    const b = placed[j];
    const id = ++flow;
    out.push({ name: 'data', cat: 'flow', ph: 's', id, pid: a.pid, tid: a.tid, ts: a.e.start });
    out.push({ name: 'data', cat: 'flow', ph: 'f', bp: 'e', id, pid: b.pid, tid: b.tid, ts: b.e.start });
  }
  return metadata ? { traceEvents: out, displayTimeUnit: 'ms', metadata } : { traceEvents: out, displayTimeUnit: 'ms' };
}
