import { bufferNodes } from '../compile/decode.js';
import type { BufferNode, ImplementationGraph } from '../compile/types.js';
import type { ProjectDocument } from '../document/types.js';
import { documentHash } from '../run/calibration.js';
import type { SyncMode } from '../run/contract.js';
import type { TraceEvent } from './event.js';
import { compareLanes, graphLanes, laneLabel, type TraceLaneKey } from './lanes.js';

// Chrome Trace Event JSON, which Perfetto and chrome://tracing open: one process per host,
// one thread per PE thread (its main thread and one lane per peer), complete (`X`) events in
// microseconds, metadata naming processes and threads, and flow arrows along the data.

export interface ChromeEvent {
  name: string;
  ph: 'X' | 'M' | 's' | 'f';
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
  const pidOf = (host: string) => {
    let pid = pids.get(host);
    if (pid === undefined) {
      pids.set(host, (pid = pids.size + 1));
      out.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `host ${host}` } });
    }
    return pid;
  };
  const tidOf = (e: TraceLaneKey) => {
    const key = `${e.pe}\u0000${e.thread}`;
    let tid = tids.get(key);
    if (tid === undefined) {
      const pid = pidOf(e.host);
      tids.set(key, (tid = tids.size + 1));
      const name = laneLabel(e.pe, e.thread);
      out.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name } });
      out.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
    }
    return tid;
  };
  const seen = new Map<string, TraceLaneKey>();
  for (const e of events) if (!seen.has(`${e.pe}\u0000${e.thread}`)) seen.set(`${e.pe}\u0000${e.thread}`, e);
  for (const l of ig ? graphLanes(ig) : []) tidOf(l);
  for (const l of [...seen.values()].sort(compareLanes)) tidOf(l);
  const placed: { e: TraceEvent; pid: number; tid: number }[] = [];
  for (const e of events) {
    const pid = pidOf(e.host);
    const tid = tidOf(e);
    placed.push({ e, pid, tid });
    const args: Record<string, unknown> = { iteration: e.iteration, cycle: e.cycle };
    if (e.node) args.node = e.node;
    if (e.buffer) args.buffer = e.buffer;
    if (e.from) args.from = e.from;
    if (e.bytes !== undefined) args.bytes = e.bytes;
    out.push({ name: e.name, cat: e.kind, ph: 'X', pid, tid, ts: e.start, dur: Math.max(0, e.end - e.start), args });
  }

  // Flows: who reads the data an event wrote, in the same iteration.
  const transfersFrom = new Map<string, typeof placed>();
  const fireOf = new Map<string, (typeof placed)[number]>();
  for (const p of placed) {
    if (p.e.kind === 'transfer' && p.e.from) push(transfersFrom, `${p.e.from}|${p.e.iteration}`, p);
    if (p.e.kind === 'fire' && p.e.node) fireOf.set(`${p.e.node}|${p.e.iteration}`, p);
  }
  const all = ig ? bufferNodes(ig) : [];
  const buffers = new Map(all.map((b) => [b.id as string, b]));
  const produced = new Map<string, BufferNode[]>();
  for (const b of all) if ('node' in b.from) push(produced, b.from.node as string, b);
  let flow = 0;
  const link = (a: (typeof placed)[number], b: (typeof placed)[number]) => {
    const id = ++flow;
    out.push({ name: 'data', cat: 'flow', ph: 's', id, pid: a.pid, tid: a.tid, ts: a.e.start });
    out.push({ name: 'data', cat: 'flow', ph: 'f', bp: 'e', id, pid: b.pid, tid: b.tid, ts: b.e.start });
  };
  for (const p of placed) {
    if (p.e.kind === 'transfer' && p.e.buffer) {
      for (const next of transfersFrom.get(`${p.e.buffer}|${p.e.iteration}`) ?? []) link(p, next);
      for (const c of buffers.get(p.e.buffer)?.consumers ?? []) {
        const f = fireOf.get(`${c.node}|${p.e.iteration}`);
        if (f) link(p, f);
      }
    }
    if (p.e.kind === 'fire' && p.e.node) {
      for (const b of produced.get(p.e.node) ?? []) {
        for (const next of transfersFrom.get(`${b.id}|${p.e.iteration}`) ?? []) link(p, next);
      }
    }
  }
  return metadata ? { traceEvents: out, displayTimeUnit: 'ms', metadata } : { traceEvents: out, displayTimeUnit: 'ms' };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
