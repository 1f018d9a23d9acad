import { bufferNodes } from '../compile/decode.js';
import type { BufferNode, ImplementationGraph } from '../compile/types.js';
import type { TraceEvent } from './event.js';
import { compareLanes, graphLanes, type TraceLaneKey } from './lanes.js';

// What every trace export draws alike (Chrome, Paje): which lanes there are, in which order,
// and which events the data flows between. One module, so the formats carry the same content.

const laneKey = (l: TraceLaneKey) => `${l.pe}\u0000${l.thread}`;

/**
 * The lanes an export lists, in order: the graph's lanes (trace/lanes.ts graphLanes), so a
 * predicted and a measured trace of one graph number them alike, then any other lane the
 * events use (a graph-less trace: all of them), ordered host, PE, thread.
 */
export function exportLanes(events: readonly TraceEvent[], ig?: ImplementationGraph): TraceLaneKey[] {
  const out = new Map<string, TraceLaneKey>();
  for (const l of ig ? graphLanes(ig) : []) out.set(laneKey(l), l);
  const rest = new Map<string, TraceLaneKey>();
  for (const e of events) {
    const k = laneKey(e);
    if (!out.has(k) && !rest.has(k)) rest.set(k, { host: e.host, pe: e.pe, thread: e.thread });
  }
  for (const l of [...rest.values()].sort(compareLanes)) out.set(laneKey(l), l);
  return [...out.values()];
}

/**
 * Data flows as pairs of event indices [writer, reader], read from the data, same iteration:
 * with the graph, producer firing -> its buffers' transfers -> the consumers' firings; without
 * it, each transfer -> the next transfer of the same data. Ordered by the writer's index.
 */
export function dataFlows(events: readonly TraceEvent[], ig?: ImplementationGraph): [number, number][] {
  const transfersFrom = new Map<string, number[]>();
  const fireOf = new Map<string, number>();
  events.forEach((e, i) => {
    if (e.kind === 'transfer' && e.from) push(transfersFrom, `${e.from}|${e.iteration}`, i);
    if (e.kind === 'fire' && e.node) fireOf.set(`${e.node}|${e.iteration}`, i);
  });
  const all = ig ? bufferNodes(ig) : [];
  const buffers = new Map(all.map((b) => [b.id as string, b]));
  const produced = new Map<string, BufferNode[]>();
  for (const b of all) if ('node' in b.from) push(produced, b.from.node as string, b);
  const out: [number, number][] = [];
  events.forEach((e, i) => {
    if (e.kind === 'transfer' && e.buffer) {
      for (const next of transfersFrom.get(`${e.buffer}|${e.iteration}`) ?? []) out.push([i, next]);
      for (const c of buffers.get(e.buffer)?.consumers ?? []) {
        const f = fireOf.get(`${c.node}|${e.iteration}`);
        if (f !== undefined) out.push([i, f]);
      }
    }
    if (e.kind === 'fire' && e.node) {
      for (const b of produced.get(e.node) ?? []) {
        for (const next of transfersFrom.get(`${b.id}|${e.iteration}`) ?? []) out.push([i, next]);
      }
    }
  });
  return out;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
