import { dataTypeBytes, type DataType } from '@pipeloom/kernels';
import { bufferId, type NodeId, type PeId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { Router } from './route.js';
import type { BufferNode } from './types.js';

export interface Insertion {
  buffers: BufferNode[];
  /** By buffer number: the link a copied buffer's copy crosses (from the route); undefined for a producer's buffer. */
  links: (Link | undefined)[];
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
  const add = (pe: PeId, source: NodeId, port: string, from: BufferNode['from'], type: DataType, bytes: number, link?: Link) => {
    const buffer: BufferNode = { id: bufferId(`bn_${buffers.length}`), pe, source, port, from, type, bytes, consumers: [], next: [], depth: 1, color: -1 };
    buffers.push(buffer);
    links.push(link);
    return buffer;
  };

  // Producers' buffers; each node's outputs are consecutive, in port order.
  const first = new Int32Array(model.doc.app.nodes.length);
  for (const id of order) {
    const n = model.node.get(id)!;
    first[n.index] = buffers.length;
    for (const port of n.kernel.outputs) {
      const t = port.type(n.params);
      add(n.pe, n.id, port.name, { node: n.id }, t, dataTypeBytes(t));
    }
  }

  // The buffers of the output being routed, by PE index: held[pe] is valid where stamp[pe] is
  // that output's serial number, so nothing is cleared between outputs.
  const stamp = new Int32Array(model.pes.length).fill(-1);
  const held: BufferNode[] = new Array(model.pes.length);
  let serial = 0;
  for (const id of order) {
    const n = model.node.get(id)!;
    const home = model.pe.get(n.pe)!.index;
    n.kernel.outputs.forEach((port, j) => {
      const root = buffers[first[n.index] + j];
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
            let b = stamp[pe] === serial ? held[pe] : undefined;
            if (!b) {
              b = add(route.pes[i], n.id, port.name, { buffer: prev.id }, root.type, root.bytes, route.links[i - 1]);
              prev.next.push(b.id);
              stamp[pe] = serial;
              held[pe] = b;
            }
            prev = b;
          }
        }
        prev.consumers.push({ node: to.id, port: edge.to.port });
      }
    });
  }
  return { buffers, links };
}
