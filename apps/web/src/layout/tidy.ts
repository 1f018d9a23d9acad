import ELK from 'elkjs/lib/elk.bundled.js';
import type { WrittenDocument } from '@pipeloom/core';

// "Tidy": an ELK layered layout of the DFG, left to right, one port per handle side. Runs in
// the worker; the result is applied as one undoable batch of moves.

let elk: InstanceType<typeof ELK> | undefined;

export async function tidyDfg(
  doc: WrittenDocument,
  sizes: Record<string, { width: number; height: number }>,
): Promise<Record<string, { x: number; y: number }>> {
  elk ??= new ELK();
  const index = new Map(doc.app.nodes.map((n, i) => [n.id, i]));
  const out = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '110',
      'elk.spacing.nodeNode': '40',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    // ELK's ids are node numbers: it refuses some characters of flattened and firing ids (`s1/inc`, `S#3`).
    children: doc.app.nodes.map((n, i) => ({ id: `n${i}`, ...(sizes[n.id] ?? { width: 170, height: 80 }) })),
    edges: doc.app.edges.flatMap((e, i) =>
      index.has(e.from.node) && index.has(e.to.node) ? [{ id: `e${i}`, sources: [`n${index.get(e.from.node)}`], targets: [`n${index.get(e.to.node)}`] }] : [],
    ),
  });
  const pos: Record<string, { x: number; y: number }> = {};
  for (const c of out.children ?? []) pos[doc.app.nodes[Number(c.id.slice(1))].id] = { x: Math.round((c.x ?? 0) + 40), y: Math.round((c.y ?? 0) + 40) };
  return pos;
}
