import type { IterationValue, Params } from '@pipeloom/kernels/specs';
import type { ModelEdges, ModelNode } from './model.js';
import type { ProjectDocument } from './types.js';

// Checkers derive what they expect from the graph upstream: kernels that say what their
// outputs hold (`values`: scale x iteration + offset, exact for the matrix and vector kernels,
// joins included) carry it downstream in topological order, and a checker (`expects`) whose
// document sets none of its expectation params gets them from its inputs. Any of them set in
// the document is the override: that checker is left as written.

/**
 * Fills the expectation params of every checker it can (in `nodes[i].params`) and returns
 * them by node id (what the inspector shows as derived). Expects a type-checked model whose
 * cycles all pass through delayed edges.
 */
export function deriveExpectations(doc: ProjectDocument, nodes: ModelNode[], edges: ModelEdges): Map<string, Params> {
  const derived = new Map<string, Params>();
  if (!nodes.some((n) => n.kernel.expects)) return derived;
  const byIndex = new Map(nodes.map((n) => [n.index, n]));
  // Kahn's order over node indices; each node's inputs by port from the edge columns.
  const indegree = new Map<number, number>();
  const succ = new Map<number, number[]>();
  const inputsOf = new Map<number, { port: string; from: number; fromPort: string }[]>();
  for (const n of nodes) indegree.set(n.index, 0);
  for (let e = 0; e < edges.count; e++) {
    // A delayed edge (feedback) brings values of earlier iterations: nothing is derived through it.
    if (edges.delay[e] > 0) continue;
    const from = edges.from[e];
    const to = edges.to[e];
    indegree.set(to, (indegree.get(to) ?? 0) + 1);
    succ.set(from, [...(succ.get(from) ?? []), to]);
    inputsOf.set(to, [...(inputsOf.get(to) ?? []), { port: edges.toPort[e], from, fromPort: edges.fromPort[e] }]);
  }
  const ready = nodes.filter((n) => indegree.get(n.index) === 0).map((n) => n.index);
  const held = new Map<number, Record<string, IterationValue | undefined>>();
  while (ready.length) {
    const i = ready.shift()!;
    const n = byIndex.get(i)!;
    const inputs: Record<string, IterationValue | undefined> = {};
    const seen = new Set<string>();
    for (const x of inputsOf.get(i) ?? []) {
      const v = held.get(x.from)?.[x.fromPort];
      // An input fed in parts (a multi-rate join) has one value only if every part agrees.
      const before = inputs[x.port];
      inputs[x.port] = !seen.has(x.port) ? v : before && v && before.scale === v.scale && before.offset === v.offset ? before : undefined;
      seen.add(x.port);
    }
    const expects = n.kernel.expects;
    if (expects) {
      const written = doc.app.nodes[n.index]?.params ?? {};
      if (!expects.params.some((p) => Object.hasOwn(written, p))) {
        const params = safely(() => expects.derive(inputs));
        if (params) {
          Object.assign(n.params, params);
          derived.set(n.id, params);
        }
      }
    }
    held.set(i, (n.kernel.values && safely(() => n.kernel.values!(n.params, inputs))) || {});
    for (const j of succ.get(i) ?? []) {
      indegree.set(j, indegree.get(j)! - 1);
      if (indegree.get(j) === 0) ready.push(j);
    }
  }
  return derived;
}

/** A kernel's value function that throws knows nothing: the checker keeps its params. */
function safely<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
