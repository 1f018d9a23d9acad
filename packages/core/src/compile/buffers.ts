import { dataTypeBytes, type DataType } from '@pipeloom/kernels';
import { bufferId, type BufferId, type NodeId } from '../ids.js';
import type { Model, ModelEdge } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { Router } from './route.js';
import { childLists, NONE, push, type BufferTable } from './table.js';
import type { BufferNode } from './types.js';

export interface Insertion {
  buffers: BufferNode[];
  /** By buffer number: the link a copied buffer's copy crosses (from the route); undefined for a producer's buffer. */
  links: (Link | undefined)[];
  /** The buffers' structure by number, for the later passes. */
  table: BufferTable;
}

/**
 * Paper 4.2.2, buffer node insertion. First a buffer on the producer's PE for every node
 * output (nodes in schedule order, outputs in port order). Then for each consumer (edges in
 * document order) walk the fastest route and insert a buffer on every PE crossed unless one
 * holding the same source (node + port) is already there: routes from one output share their
 * common prefix, so the buffers of one source form a tree rooted at the producer.
 */
export function insertBuffers(model: Model, order: NodeId[], router: Router): Insertion {
  const buffers: BufferNode[] = [];
  const links: (Link | undefined)[] = [];
  const parent: number[] = [];
  const peOf: number[] = [];
  const read = new Int32Array(model.doc.app.edges.length).fill(-1);
  // Copies of one buffer share their `from` (a relay CPU's buffer feeds several PEs).
  const upstream: ({ buffer: BufferId } | undefined)[] = [];
  const fromBuffer = (i: number) => (upstream[i] ??= { buffer: buffers[i].id });
  const add = (pe: number, source: NodeId, port: string, from: number, type: DataType, bytes: number, link?: Link) => {
    const number = buffers.length;
    const buffer: BufferNode = { id: bufferName(number), pe: model.pes[pe].id, source, port, from: from < 0 ? { node: source } : fromBuffer(from), type, bytes, consumers: NONE, next: NONE, depth: 1, color: -1 };
    buffers.push(buffer);
    links.push(link);
    parent.push(from);
    upstream.push(undefined);
    peOf.push(pe);
    if (from >= 0) buffers[from].next = push(buffers[from].next, buffer.id);
    return number;
  };

  // Producers' buffers; each node's outputs are consecutive, in port order.
  const output = new Int32Array(model.doc.app.nodes.length).fill(-1);
  for (const id of order) {
    const n = model.node.get(id)!;
    const pe = model.pe.get(n.pe)!.index;
    output[n.index] = buffers.length;
    for (const port of n.kernel.outputs) {
      // analyze() resolved the type of every connected output on its edges: reuse it.
      const edge = firstEdge(n.outputs, port.name);
      if (edge) add(pe, n.id, port.name, -1, edge.type, edge.bytes);
      else {
        const t = port.type(n.params);
        add(pe, n.id, port.name, -1, t, dataTypeBytes(t));
      }
    }
  }

  // The buffers of the output being routed, by PE index: held[pe] is valid where stamp[pe] is
  // that output's serial number, so nothing is cleared between outputs.
  const stamp = new Int32Array(model.pes.length).fill(-1);
  const held = new Int32Array(model.pes.length);
  let serial = 0;
  for (const id of order) {
    const n = model.node.get(id)!;
    const home = model.pe.get(n.pe)!.index;
    const ports = n.kernel.outputs;
    for (let j = 0; j < ports.length; j++) {
      const port = ports[j];
      const root = output[n.index] + j;
      serial++;
      stamp[home] = serial;
      held[home] = root;
      for (const edge of n.outputs) {
        if (edge.from.port !== port.name) continue;
        const to = model.node.get(edge.to.node)!;
        let prev = root;
        if (to.pe !== n.pe) {
          const route = router.route(n.pe, to.pe, edge.bytes);
          for (let i = 1; i < route.at.length; i++) {
            const pe = route.at[i];
            if (stamp[pe] !== serial) {
              stamp[pe] = serial;
              held[pe] = add(pe, n.id, port.name, prev, buffers[root].type, buffers[root].bytes, route.links[i - 1]);
            }
            prev = held[pe];
          }
        }
        const b = buffers[prev];
        // The edge's own end ({node, port}, made once by analyze()): read-only from here.
        b.consumers = push(b.consumers, edge.to);
        read[edge.index] = prev;
      }
    }
  }
  // A buffer's consumers and copies start as NONE, the one frozen empty list: push() gives a
  // list its own array at its first element, and the lists that stay empty keep NONE (half of
  // the bench graph's 70,000 lists; the IG is read-only, and a write to NONE would throw).
  const parents = Int32Array.from(parent);
  return { buffers, links, table: { parent: parents, pe: Int32Array.from(peOf), read, output, children: childLists(parents) } };
}

// `bn_k` for each k, made once per process: a designer recompiling on every edit, or a 35,000-
// buffer graph compiled again, reuses the strings instead of building them anew (strings are
// immutable, so sharing them between implementation graphs is safe).
const names: BufferId[] = [];
function bufferName(k: number): BufferId {
  return (names[k] ??= bufferId(`bn_${k}`));
}

/** The first edge leaving `port`, if any. */
function firstEdge(outputs: ModelEdge[], port: string): ModelEdge | undefined {
  for (const e of outputs) if (e.from.port === port) return e;
  return undefined;
}
