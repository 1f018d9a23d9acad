import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '@pipeloom/core';
import { layeredDocument } from '@pipeloom/core/testing';
import { readDocument } from '../shell/documents.js';
import { compileBoth, PREVIEW_EVENTS } from './compile.js';

const piic = readDocument(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8')).doc!;

describe('the compile worker', () => {
  it('returns both strategies, laid out, with the predictor\'s cycle times', async () => {
    const out = await compileBoth(piic);
    expect(out.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(out.overlap?.ig.overlap).toBe(true);
    expect(out.noOverlap?.ig.overlap).toBe(false);
    const direct = compile(piic, { overlap: true });
    expect(out.overlap?.ig.buffers.count).toBe(direct.ok ? direct.ig.buffers.count : -1);
    expect(out.overlap!.layout.nodes.length).toBeGreaterThan(out.overlap!.ig.buffers.count);
    expect(out.prediction!.overlap!.cycleTime).toBeLessThanOrEqual(out.prediction!.noOverlap!.cycleTime);
  });

  it('reports an invalid document as diagnostics, with no graph', async () => {
    const broken = { ...piic, mapping: { ...piic.mapping, C: 'gpu7@h9' } };
    const out = await compileBoth(broken);
    expect(out.overlap!).toBeNull();
    expect(out.diagnostics.some((d) => d.path.startsWith('mapping') && d.severity === 'error')).toBe(true);
  });

  it('an editor document read from a file keeps positions for every element', () => {
    expect(piic.app.nodes.every((n) => n.position)).toBe(true);
    expect(piic.arch.hosts.every((h) => h.position)).toBe(true);
    expect(piic.arch.pes.every((p) => p.position)).toBe(true);
    expect(piic.arch.pes.map((p) => p.id)).toEqual(['cpu@h0', 'gpu0@h0', 'cpu@h1', 'gpu0@h1']);
  });

  it('a 3,000-node document compiles, lays out and previews both strategies (the preview ends near PREVIEW_EVENTS)', async () => {
    const big = layeredDocument(5, { nodes: 3000, hosts: 16, gpus: 3 });
    const out = await compileBoth(big);
    expect(out.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    for (const s of [out.overlap!, out.noOverlap!]) expect(s.layout.nodes.filter((n) => n.parent)).toHaveLength(s.ig.order.length + s.ig.buffers.count);
    for (const p of [out.prediction!.overlap!, out.prediction!.noOverlap!]) {
      expect(p.timeline.length).toBeGreaterThanOrEqual(PREVIEW_EVENTS);
      expect(p.timeline.filter((e) => e.cycle < p.timelineCycles - 1).length).toBeLessThan(PREVIEW_EVENTS);
      expect(p.timelineCycles).toBeLessThan(p.cycles);
    }
  });
});


describe('the lowered view for rates and composites', () => {
  const file = (name: string) => readDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8')).doc!;

  it('split-join: S fires 8 times; the expanded graph has S#0..S#7 between P and C, laid out left to right', async () => {
    const out = await compileBoth(file('split-join.json'));
    expect(out.lowered!.repetitions).toEqual({ P: 1, S: 8, C: 1 });
    const ids = out.lowered!.expanded.nodes.map((n) => n.id);
    expect(ids).toEqual(['P', ...Array.from({ length: 8 }, (_, i) => `S#${i}`), 'C']);
    expect(out.lowered!.expanded.edges).toHaveLength(16);
    expect(out.lowered!.expanded.edges[3]).toMatchObject({ from: { node: 'P' }, to: { node: 'S#3' }, fromTokens: { first: 3, count: 1, of: 8 } });
    const x = (id: string) => out.lowered!.expanded.nodes.find((n) => n.id === id)!.position.x;
    expect(x('P')).toBeLessThan(x('S#0'));
    expect(x('S#7')).toBeLessThan(x('C'));
  });

  it('composites are flattened in it; a document without rates or composites has none', async () => {
    const out = await compileBoth(file('composite.json'));
    expect(out.lowered!.expanded.nodes.map((n) => n.id)).toEqual(['P', 's1/inc', 's1/add', 's2/inc', 's2/add', 'C']);
    expect((await compileBoth(piic)).lowered).toBeUndefined();
  });
});
