import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, type ProjectDocument, type WrittenDocument } from '@pipeloom/core';
import { layeredDocument } from '@pipeloom/core/testing';
import { readDocument } from '../document/documents.js';
import { compileBoth, PREVIEW_EVENTS } from './compile.js';
import { ioView } from '../document/io.js';

const piic = readDocument(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8')).doc!;

describe('the compile worker', () => {
  it("returns both strategies, laid out, with the predictor's cycle times", async () => {
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

  it('a source whose path names no data root is a problem on its node, with the fix', async () => {
    const doc = { ...piic, app: { ...piic.app, nodes: [...piic.app.nodes, { id: 'src', kernel: 'io.read', params: { path: 'frames/a.png' } }] } };
    const out = await compileBoth(doc);
    const i = doc.app.nodes.length - 1;
    expect(out.diagnostics).toContainEqual({
      path: `app.nodes[${i}].params.path`,
      message: 'source src: path "frames/a.png" names no data root',
      hint: 'write root:relative/path (e.g. "data:frames/%05d.png"), a root the agent serves (pipeloom agent --data NAME=DIR)',
      severity: 'error',
    });
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

describe('the task graph for task-bag mode', () => {
  const file = (name: string) => readDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8')).doc!;
  const taskbag = (doc: WrittenDocument): WrittenDocument => ({ ...doc, options: { ...doc.options, mode: 'taskbag' } });

  it('MLEM in task-bag mode: the graph runBag takes, plain data that survives a structured clone (comlink)', async () => {
    const out = await compileBoth(taskbag(file('mlem.json')));
    expect(out.bag?.diagnostics).toEqual([]);
    const graph = out.bag!.graph!;
    // projbp as its 4 shares and their sum (tasks: K).
    expect(graph.nodes.map((n) => n.id)).toEqual(['phantom', 'projbp[0]', 'projbp[1]', 'projbp[2]', 'projbp[3]', 'projbp', 'update', 'error']);
    // update reads its own estimate D = 4 iterations back, and the shares' sum of this one.
    const update = graph.nodes.find((n) => n.id === 'update')!;
    expect(update.inputs.flatMap((i) => i.parts.map((p) => `${graph.nodes[p.from].id}.${p.port}->${i.port} delay ${p.delay}`)).sort()).toEqual([
      'phantom.sensitivity->sensitivity delay 0',
      'projbp.sum->backprojection delay 0',
      'update.estimate->previous delay 4',
    ]);
    expect(structuredClone(graph)).toEqual(graph);
  });

  it('task-bag mode runs a loop static mode refuses (D = 1 with the shares on two PEs): the graph, and the static problem as a warning', async () => {
    const doc = taskbag(file('mlem.json'));
    (doc.params!.D as { value: number }).value = 1;
    const out = await compileBoth(doc);
    expect(out.overlap).toBeNull();
    expect(out.bag?.graph).toBeDefined();
    expect(out.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(out.diagnostics.some((d) => d.severity === 'warning' && d.message.startsWith('static mode: the loop '))).toBe(true);
  });

  it('a static document has no task graph; a document that does not validate has none either', async () => {
    expect((await compileBoth(file('mlem.json'))).bag).toBeUndefined();
    const broken = taskbag({ ...piic, mapping: { ...piic.mapping, C: 'gpu7@h9' } });
    const out = await compileBoth(broken);
    expect(out.bag).toBeUndefined();
    expect(out.diagnostics.some((d) => d.severity === 'error')).toBe(true);
  });

  it('a document the mode cannot run: no graph, and why, in the bag plan and in the problems list', async () => {
    // Split-join with a delay on S -> C: C's input is fed in 8 parts, each read an iteration back.
    const doc = taskbag(file('split-join.json'));
    doc.app.edges = doc.app.edges.map((e, i) => (i === 1 ? { ...e, delay: 1, init: 0 } : e));
    const out = await compileBoth(doc);
    expect(out.bag?.graph).toBeUndefined();
    expect(out.bag!.diagnostics).toEqual([
      expect.objectContaining({
        path: 'app.nodes[2]',
        message: expect.stringContaining('input "in" of node "C" is fed in parts with a delay'),
        hint: expect.stringContaining('static mode'),
      }),
    ]);
    expect(out.diagnostics).toEqual(expect.arrayContaining(out.bag!.diagnostics));
  });
});

describe('the data examples, as the Examples menu opens them', () => {
  const file = (name: string) => readDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8')).doc!;

  it.each([
    [
      'saliency-y4m.json',
      [
        ['clip', 'source', 'data:clip.y4m', '48x64'],
        ['maps', 'sink', 'data:saliency/%05d.png', '48x64'],
      ],
    ],
    [
      'mlem-files.json',
      [
        ['sinogram', 'source', 'data:mlem/sinogram.npy', '36x16x16'],
        ['sensitivity', 'source', 'data:mlem/sensitivity.npy', '16x16x16'],
        ['phantom', 'source', 'data:mlem/phantom.npy', '16x16x16'],
        ['estimate', 'sink', 'data:mlem/estimate.npy', '16x16x16'],
      ],
    ],
    ['reg2d-frames-png.json', [['png', 'sink', 'data:frames/%05d.png', '64x64']]],
    ['scan-reg2d-png.json', Array.from({ length: 9 }, (_, k) => [`f${k}`, 'source', `data:frames/0000${k}.png`, '64x64'])],
  ])('%s compiles without a problem; its sources and sinks show their files and shapes', async (name, shown) => {
    const doc = file(name);
    const out = await compileBoth(doc);
    expect(out.diagnostics).toEqual([]);
    expect(out.overlap ?? out.noOverlap).not.toBeNull();
    const io = doc.app.nodes.flatMap((n) => {
      const v = ioView(n);
      return v ? [[n.id, v.role, v.path, v.shape]] : [];
    });
    expect(io).toEqual(shown);
  });
});
