import { bufferNodes } from '../compile/decode.js';
import type { BufferNode, ImplementationGraph } from '../compile/types.js';
import type { TraceEvent } from './event.js';
import { laneLabel } from './lanes.js';

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
}

/**
 * Converts trace events. With the implementation graph, flow arrows run producer firing ->
 * transfers -> consumer firings of the same iteration; without it, from each transfer to the
 * next transfer of the same data.
 */
export function toChromeTrace(events: readonly TraceEvent[], ig?: ImplementationGraph): ChromeTrace {
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
  const tidOf = (e: TraceEvent, pid: number) => {
    const key = `${e.pe}\u0000${e.thread}`;
    let tid = tids.get(key);
    if (tid === undefined) {
      tids.set(key, (tid = tids.size + 1));
      const name = laneLabel(e.pe, e.thread);
      out.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name } });
      out.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
    }
    return tid;
  };
  const placed: { e: TraceEvent; pid: number; tid: number }[] = [];
  for (const e of events) {
    const pid = pidOf(e.host);
    const tid = tidOf(e, pid);
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
  return { traceEvents: out, displayTimeUnit: 'ms' };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
