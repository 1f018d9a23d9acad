import type { NodeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';

/**
 * Paper 4.2.1: a node is scheduled once all its predecessors are; a counter gives the firing
 * order. Predecessors through a delayed edge do not count (it reads an earlier iteration). Nodes are visited in document order and predecessors in input-port order, so the
 * schedule is deterministic. Iterative (deep pipelines would overflow a recursive walk).
 */
export function schedule(model: Model): { schedule: Record<NodeId, number>; order: NodeId[]; nodes: ModelNode[] } {
  const index = Object.create(null) as Record<NodeId, number>;
  const order: NodeId[] = [];
  // The same nodes as the model's objects: what the later passes walk.
  const nodes: ModelNode[] = [];
  // By node index: 0 unvisited, 1 on the walk's stack, 2 scheduled.
  const state = new Uint8Array(model.doc.app.nodes.length);
  const stack: ModelNode[] = [];
  const pending: ModelNode[] = [];
  const inputs = model.inputs;
  for (const root of model.nodes) {
    if (state[root.index] === 2) continue;
    stack.push(root);
    while (stack.length) {
      const n = stack[stack.length - 1];
      if (state[n.index] === 2) {
        stack.pop();
        continue;
      }
      state[n.index] = 1;
      pending.length = 0;
      for (let k = inputs.start[n.index]; k < inputs.start[n.index + 1]; k++) {
        // A delayed input reads an earlier iteration: its producer may come later (a loop).
        if (model.edges.delay[inputs.edge[k]] > 0) continue;
        const from = model.nodes[model.edges.from[inputs.edge[k]]];
        if (state[from.index] !== 2) pending.push(from);
      }
      if (pending.length === 0) {
        index[n.id] = order.length;
        order.push(n.id);
        nodes.push(n);
        state[n.index] = 2;
        stack.pop();
      } else {
        // Push in reverse so the first input's producer is scheduled first.
        for (let i = pending.length - 1; i >= 0; i--) {
          if (state[pending[i].index] === 1) throw new Error(`schedule: cycle through ${pending[i].id} (validate() rejects cycles)`);
          stack.push(pending[i]);
        }
      }
    }
  }
  return { schedule: index, order, nodes };
}
