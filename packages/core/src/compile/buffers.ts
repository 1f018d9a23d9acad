import { dataTypeBytes } from '@pipeloom/kernels';
import { bufferId, type NodeId } from '../ids.js';
import type { Model } from '../document/model.js';
import type { Router } from './route.js';
import type { BufferNode } from './types.js';

/**
 * Paper 4.2.2, buffer node insertion. First a buffer on the producer's PE for every node
 * output (nodes in schedule order, outputs in port order). Then for each consumer (edges in
 * document order) walk the fastest route and insert a buffer on every PE crossed unless one
 * holding the same source (node + port) is already there: routes from one output share their
 * common prefix, so the buffers of one source form a tree rooted at the producer.
 */
export function insertBuffers(model: Model, order: NodeId[], router: Router): BufferNode[] {
  const buffers: BufferNode[] = [];
  const at = new Map<string, BufferNode>();
  const key = (node: string, port: string, pe: string) => `${node}\u0000${port}\u0000${pe}`;
  const add = (b: Omit<BufferNode, 'id' | 'consumers' | 'next' | 'depth' | 'color'>) => {
    const buffer: BufferNode = { id: bufferId(`bn_${buffers.length}`), ...b, consumers: [], next: [], depth: 1, color: -1 };
    buffers.push(buffer);
    at.set(key(b.source, b.port, b.pe), buffer);
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
      const root = at.get(key(n.id, port.name, n.pe))!;
      for (const edge of n.outputs) {
        if (edge.from.port !== port.name) continue;
        const to = model.node.get(edge.to.node)!;
        let prev = root;
        if (to.pe !== n.pe) {
          const route = router.route(n.pe, to.pe, edge.bytes);
          for (let i = 1; i < route.pes.length; i++) {
            const pe = route.pes[i];
            let b = at.get(key(n.id, port.name, pe));
            if (!b) {
              b = add({ pe, source: n.id, port: port.name, from: { buffer: prev.id }, type: root.type, bytes: root.bytes });
              prev.next.push(b.id);
            }
            prev = b;
          }
        }
        prev.consumers.push({ node: to.id, port: edge.to.port });
      }
    }
  }
  return buffers;
}
