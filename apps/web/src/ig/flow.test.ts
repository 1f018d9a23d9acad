import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, type WrittenDocument } from '@pipeloom/core';
import { layeredDocument } from '@pipeloom/core/testing';
import { readDocument } from '../document/documents.js';
import { DRAW_IN_VIEW_ONLY_ABOVE } from '../lib/canvas.js';
import { layoutIg } from '../layout/ig.js';
import { dataBounds, declaredHandles, igFlow } from './flow.js';

async function strategyOf(doc: WrittenDocument) {
  const r = compile(doc, { overlap: true });
  if (!r.ok) throw new Error('does not compile');
  return {
    ig: r.ig,
    layout: await layoutIg(
      r.ig,
      doc.mapping,
      doc.arch.pes.map((p) => p.id),
    ),
  };
}

describe("the IG view's React Flow nodes", () => {
  it('a small graph leaves its handles to be measured', async () => {
    const piic = readDocument(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8')).doc!;
    const { nodes, edges } = igFlow(await strategyOf(piic), piic);
    expect(nodes.length).toBeLessThanOrEqual(DRAW_IN_VIEW_ONLY_ABOVE);
    expect(nodes.every((n) => n.handles === undefined)).toBe(true);
    expect(edges.length).toBeGreaterThan(0);
  });

  it("a node with tasks on a PE list: its shares are of its kernel, in their PE's colour; its sum is generic.sum", async () => {
    const mlem = readDocument(readFileSync(new URL('../../../../examples/mlem.json', import.meta.url), 'utf8')).doc!;
    const { nodes } = igFlow(await strategyOf(mlem), mlem);
    const data = (id: string) => nodes.find((n) => n.id === `n:${id}`)!.data as { kernel: string; color?: string };
    expect(data('projbp[0]').kernel).toBe('mlem.projbp');
    expect(data('projbp').kernel).toBe('generic.sum');
    expect(data('update').kernel).toBe('mlem.update');
    expect(data('projbp[1]').color).toBe(data('phantom').color); // cpu@h0
    expect(data('projbp[0]').color).toBe(data('update').color); // gpu0@h0
    expect(data('projbp[0]').color).not.toBe(data('projbp[1]').color);
  });

  it("a large graph declares every member's handles (mid-left target, mid-right source) and none for lanes", async () => {
    const big = layeredDocument(5, { nodes: 600, hosts: 8, gpus: 3 });
    const s = await strategyOf(big);
    const { nodes } = igFlow(s, big);
    expect(nodes.length).toBeGreaterThan(DRAW_IN_VIEW_ONLY_ABOVE);
    for (const n of nodes) {
      if (n.type === 'igPe') expect(n.handles).toEqual([]);
      else expect(n.handles).toEqual(declaredHandles({ kind: 'member', width: n.width!, height: n.height! }));
    }
    const h = declaredHandles({ kind: 'buffer', width: 100, height: 36 });
    expect(h.map((x) => [x.type, x.x + x.width! / 2, x.y + x.height! / 2])).toEqual([
      ['target', 0, 18],
      ['source', 100, 18],
    ]);
  });

  it('the view opens on the first member of the top lane', () => {
    const nodes = [
      { id: 'pe:a', kind: 'pe' as const, x: 0, y: 0, width: 2000, height: 100 },
      { id: 'b:x', kind: 'buffer' as const, parent: 'pe:a', x: 700, y: 30, width: 100, height: 36 },
      { id: 'pe:b', kind: 'pe' as const, x: 0, y: 110, width: 2000, height: 100 },
      { id: 'b:y', kind: 'buffer' as const, parent: 'pe:b', x: 12, y: 30, width: 100, height: 36 },
    ];
    expect(dataBounds(nodes)).toEqual({ x: 700, y: 0, width: 1300, height: 210 });
  });
});
