import { analyze, formatBytes, formatSeconds, peId, Router, type ScanLinkCost, type WrittenDocument } from '@pipeloom/core';

// What a message between two of a scan's workers costs in the timeline's simulations: the
// architecture graph's fastest route between their PEs, as the compiler routes a transfer
// (core's Router: latency + bytes / bandwidth per link, the fastest link where two PEs have
// several), for a message of one element ((2 + W) u32 words). A route of several links (a
// GPU on another host: PCIe, network, PCIe) costs the sum of its links' times, which is one
// latency (their sum) and one bandwidth (the inverse of the sum of inverses) for any size.
// Workers on one PE pass values in its memory: free.

export interface ScanMessages {
  /** Bytes of one element: (2 + W) x 4. */
  elementBytes: number;
  /** The route's cost from worker `from`'s PE to worker `to`'s (latency 0, bandwidth infinite on one PE). */
  link: (from: number, to: number) => ScanLinkCost;
  /** What is modelled, in words, for the legend. */
  summary: string;
}

export type MessagesResult = { messages: ScanMessages; why?: undefined } | { messages?: undefined; why: string };

const FREE: ScanLinkCost = { latency: 0, bandwidth: Infinity };

/**
 * The messages of a scan whose workers run on `pes` (worker i on pes[i]) with elements of
 * `words` payload words; `why` when they cannot be costed (the simulations then take them as free).
 */
export function scanMessages(doc: WrittenDocument, pes: readonly string[], words: number | undefined): MessagesResult {
  if (words === undefined) return { why: 'the operator gives no element size for these params' };
  const elementBytes = (2 + words) * 4;
  const distinct = [...new Set(pes)];
  const slot = new Map(distinct.map((pe, k) => [pe, k]));
  const q = distinct.length;
  if (q <= 1) return { messages: { elementBytes, link: () => FREE, summary: 'Messages cost nothing in the simulations: every worker runs on one PE.' } };
  // The architecture alone: an error in the application elsewhere should not hide the links.
  const { defs: _defs, ...rest } = doc;
  const { model } = analyze({ ...rest, app: { nodes: [], edges: [] }, mapping: {} });
  if (!model) return { why: 'the architecture graph has errors (the Problems list names them)' };
  const missing = distinct.find((pe) => !model.pe.has(peId(pe)));
  if (missing) return { why: `worker PE "${missing}" is not in the architecture graph` };
  const router = new Router(model);
  const table: ScanLinkCost[] = new Array(q * q).fill(FREE);
  let fastest = { time: Infinity, text: '' };
  let slowest = { time: -Infinity, text: '' };
  for (let a = 0; a < q; a++)
    for (let b = 0; b < q; b++) {
      if (a === b) continue;
      let links;
      try {
        links = router.route(peId(distinct[a]), peId(distinct[b]), elementBytes).links;
      } catch {
        return { why: `no route from ${distinct[a]} to ${distinct[b]} in the architecture graph (link them in Architecture)` };
      }
      const cost = { latency: links.reduce((s, l) => s + l.latency, 0), bandwidth: 1 / links.reduce((s, l) => s + 1 / l.bandwidth, 0) };
      table[a * q + b] = cost;
      const time = cost.latency + elementBytes / cost.bandwidth;
      const text = `${formatSeconds(time)} ${distinct[a]} → ${distinct[b]}`;
      if (time < fastest.time) fastest = { time, text };
      if (time > slowest.time) slowest = { time, text };
    }
  const range = fastest.time === slowest.time ? fastest.text : `${fastest.text} to ${slowest.text}`;
  return {
    messages: {
      elementBytes,
      link: (from, to) => table[(slot.get(pes[from]) ?? 0) * q + (slot.get(pes[to]) ?? 0)],
      summary: `Messages between workers on different PEs take the fastest route between their PEs (each link's latency + bytes / bandwidth, no contention): one element of ${formatBytes(elementBytes)}, ${range}; on one PE they are free.`,
    },
  };
}
