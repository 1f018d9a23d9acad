import { dataTypeBytes } from '@pipeloom/kernels';
import { bufferId, type NodeId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { Router } from './route.js';
import type { BufferNode } from './types.js';

/** Where each source's buffers are: source node -> output port -> PE -> buffer. */
export class BufferIndex {
  private readonly map = new Map<string, Map<string, Map<string, BufferNode>>>();
  get(node: string, port: string, pe: string): BufferNode | undefined {
    return this.map.get(node)?.get(port)?.get(pe);
  }
  set(b: BufferNode) {
    let ports = this.map.get(b.source);
    if (!ports) this.map.set(b.source, (ports = new Map()));
    let pes = ports.get(b.port);
    if (!pes) ports.set(b.port, (pes = new Map()));
    pes.set(b.pe, b);
  }
  static of(buffers: BufferNode[]): BufferIndex {
    const index = new BufferIndex();
    for (const b of buffers) index.set(b);
    return index;
  }
}

export interface Insertion {
  buffers: BufferNode[];
  /** For each buffer copied from another: the link the copy crosses (from the route). */
  links: Map<BufferNode['id'], Link>;
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
  const links = new Map<BufferNode['id'], Link>();
  const at = new BufferIndex();
  const add = (b: Omit<BufferNode, 'id' | 'consumers' | 'next' | 'depth' | 'color'>) => {
    const buffer: BufferNode = { id: bufferId(`bn_${buffers.length}`), ...b, consumers: [], next: [], depth: 1, color: -1 };
    buffers.push(buffer);
    at.set(buffer);
    return buffer;
  };

  for (const id of order) {
    const n = model.node.get(id)!;
    for (const port of n.kernel.outputs) {
      const t = port.type(n.params);
      add({ pe: n.pe, source: n.id, port: port.name, from: { node: n.id }, type: t, bytes: dataTypeBytes(t) });
    }
  }

  for (const id of order) {
    const n = model.node.get(id)!;
    for (const port of n.kernel.outputs) {
      const root = at.get(n.id, port.name, n.pe)!;
      for (const edge of n.outputs) {
        if (edge.from.port !== port.name) continue;
        const to = model.node.get(edge.to.node)!;
        let prev = root;
        if (to.pe !== n.pe) {
          const route = router.route(n.pe, to.pe, edge.bytes);
          for (let i = 1; i < route.pes.length; i++) {
            const pe = route.pes[i];
            let b = at.get(n.id, port.name, pe);
            if (!b) {
              b = add({ pe, source: n.id, port: port.name, from: { buffer: prev.id }, type: root.type, bytes: root.bytes });
              prev.next.push(b.id);
              links.set(b.id, route.links[i - 1]);
            }
            prev = b;
          }
        }
        prev.consumers.push({ node: to.id, port: edge.to.port });
      }
    }
  }
  return { buffers, links };
}
