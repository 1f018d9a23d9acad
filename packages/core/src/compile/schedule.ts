import type { NodeId } from '../ids.js';
import type { Model } from '../document/model.js';

/**
 * Paper 4.2.1: a node is scheduled once all its predecessors are; a counter gives the firing
 * order. Nodes are visited in document order and predecessors in input-port order, so the
 * schedule is deterministic. Iterative (deep pipelines would overflow a recursive walk).
 */
export function schedule(model: Model): { schedule: Record<NodeId, number>; order: NodeId[] } {
  const index = Object.create(null) as Record<NodeId, number>;
  const order: NodeId[] = [];
  const visiting = new Set<NodeId>();
  for (const root of model.nodes) {
    if (root.id in index) continue;
    const stack = [root];
    while (stack.length) {
      const n = stack[stack.length - 1];
      if (n.id in index) {
        stack.pop();
        continue;
      }
      visiting.add(n.id);
      const pending = n.kernel.inputs
        .map((p) => n.inputs.get(p.name)!.from.node)
        .filter((id) => !(id in index));
      if (pending.length === 0) {
        index[n.id] = order.length;
        order.push(n.id);
        visiting.delete(n.id);
        stack.pop();
      } else {
        // Push in reverse so the first input's producer is scheduled first.
        for (let i = pending.length - 1; i >= 0; i--) {
          if (visiting.has(pending[i])) throw new Error(`schedule: cycle through ${pending[i]} (validate() rejects cycles)`);
          stack.push(model.node.get(pending[i])!);
        }
      }
    }
  }
  return { schedule: index, order };
}
