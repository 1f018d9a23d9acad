import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bufferNodes, compile, normalize, parseDocument } from '@pipeloom/core';
import { layeredDocument } from '@pipeloom/core/testing';
import { BUFFER_SIZE, COMPUTE_SIZE, ELK_LIMIT, igGraph, layerX, layoutIg } from './ig.js';

const text = readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8');
const parsed = parseDocument(text);
if (!parsed.ok) throw new Error('examples/piic.json does not parse');
const doc = normalize(parsed.doc);

describe('implementation graph layout', () => {
  const r = compile(doc, { overlap: true });
  if (!r.ok) throw new Error('piic does not compile');
  const ig = r.ig;

  it('draws every computation and buffer node once, inside the lane of its PE', async () => {
    const layout = await layoutIg(
      ig,
      doc.mapping,
      doc.arch.pes.map((p) => p.id),
    );
    const lanes = layout.nodes.filter((n) => n.kind === 'pe').map((n) => n.id);
    expect(lanes).toEqual(doc.arch.pes.map((p) => `pe:${p.id}`));
    for (const b of bufferNodes(ig)) {
      const n = layout.nodes.filter((x) => x.id === `b:${b.id}`);
      expect(n).toHaveLength(1);
      expect(n[0].parent).toBe(`pe:${b.pe}`);
    }
    for (const id of ig.order) expect(layout.nodes.find((x) => x.id === `n:${id}`)?.parent).toBe(`pe:${doc.mapping[id]}`);
  });

  it('places data left to right: every edge goes from a smaller x to a larger one', async () => {
    const layout = await layoutIg(
      ig,
      doc.mapping,
      doc.arch.pes.map((p) => p.id),
    );
    const x = new Map(layout.nodes.map((n) => [n.id, n.x]));
    for (const e of layout.edges) expect(x.get(e.source)!).toBeLessThan(x.get(e.target)!);
  });

  it('members of one lane never overlap', async () => {
    const layout = await layoutIg(ig, doc.mapping);
    const members = layout.nodes.filter((n) => n.parent);
    for (const a of members)
      for (const b of members) {
        if (a === b || a.parent !== b.parent) continue;
        const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
        expect(overlap, `${a.id} overlaps ${b.id}`).toBe(false);
      }
  });

  it('links buffers: producer -> buffer, buffer -> copies on other PEs (transfers), buffer -> consumers', () => {
    const g = igGraph(ig, doc.mapping);
    const transfers = g.edges.filter((e) => e.transfer).length;
    expect(transfers).toBe(ig.buffers.next.list.length);
    expect(g.edges.filter((e) => e.source.startsWith('n:')).length).toBe(ig.buffers.parent.filter((p) => p < 0).length);
  });

  it('the layering used beyond ELK_LIMIT also places data left to right', () => {
    const g = igGraph(ig, doc.mapping);
    const sizes = new Map<string, { width: number; height: number }>();
    for (const list of g.members.values()) for (const m of list) sizes.set(m.id, m.kind === 'node' ? COMPUTE_SIZE : BUFFER_SIZE);
    const x = layerX(g, sizes);
    expect(x.size).toBe(sizes.size);
    for (const e of g.edges) expect(x.get(e.source)!).toBeLessThan(x.get(e.target)!);
  });
});

describe('layout of a large implementation graph', () => {
  it('a 3,000-node DFG (12,000 members, beyond what ELK lays out) gets every member in its lane, data left to right', async () => {
    const big = layeredDocument(5, { nodes: 3000, hosts: 16, gpus: 3 });
    const r = compile(big, { overlap: true });
    if (!r.ok) throw new Error('the layered document does not compile');
    const layout = await layoutIg(
      r.ig,
      big.mapping,
      big.arch.pes.map((p) => p.id),
    );
    const members = layout.nodes.filter((n) => n.parent);
    expect(members.length).toBe(r.ig.order.length + r.ig.buffers.count);
    expect(members.length).toBeGreaterThan(ELK_LIMIT);
    const lane = new Map(members.map((n) => [n.id, n.parent]));
    for (const b of bufferNodes(r.ig)) expect(lane.get(`b:${b.id}`)).toBe(`pe:${b.pe}`);
    for (const id of r.ig.order) expect(lane.get(`n:${id}`)).toBe(`pe:${big.mapping[id]}`);
    const x = new Map(members.map((n) => [n.id, n.x]));
    for (const e of layout.edges) expect(x.get(e.source)!).toBeLessThan(x.get(e.target)!);
  });
});

describe('a node with tasks mapped onto a PE list (examples/mlem.json)', () => {
  const mlem = parseDocument(readFileSync(new URL('../../../../examples/mlem.json', import.meta.url), 'utf8'));
  if (!mlem.ok) throw new Error('examples/mlem.json does not parse');
  const written = normalize(mlem.doc);

  it("each share X[j] sits in the lane of the list's PE j mod P, the combine in the first's", async () => {
    const r = compile(written, { overlap: false });
    if (!r.ok) throw new Error('mlem does not compile');
    const layout = await layoutIg(
      r.ig,
      written.mapping,
      written.arch.pes.map((p) => p.id),
    );
    const lane = (id: string) => layout.nodes.find((x) => x.id === `n:${id}`)?.parent;
    expect(['projbp[0]', 'projbp[1]', 'projbp[2]', 'projbp[3]', 'projbp'].map(lane)).toEqual([
      'pe:gpu0@h0',
      'pe:cpu@h0',
      'pe:gpu0@h0',
      'pe:cpu@h0',
      'pe:gpu0@h0',
    ]);
    for (const id of r.ig.order) expect(lane(id)).toBeDefined();
  });
});
