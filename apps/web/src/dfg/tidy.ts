import ELK from 'elkjs/lib/elk.bundled.js';
import type { ProjectDocument } from '@pipeloom/core';

// "Tidy": an ELK layered layout of the DFG, left to right, one port per handle side. Runs in
// the worker; the result is applied as one undoable batch of moves.

let elk: InstanceType<typeof ELK> | undefined;

export async function tidyDfg(doc: ProjectDocument, sizes: Record<string, { width: number; height: number }>): Promise<Record<string, { x: number; y: number }>> {
  elk ??= new ELK();
  const out = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '110',
      'elk.spacing.nodeNode': '40',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    children: doc.app.nodes.map((n) => ({ id: n.id, ...(sizes[n.id] ?? { width: 170, height: 80 }) })),
    edges: doc.app.edges.map((e, i) => ({ id: `e${i}`, sources: [e.from.node], targets: [e.to.node] })),
  });
  const pos: Record<string, { x: number; y: number }> = {};
  for (const c of out.children ?? []) pos[c.id] = { x: Math.round((c.x ?? 0) + 40), y: Math.round((c.y ?? 0) + 40) };
  return pos;
}
