import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Model } from '../document/model.js';
import type { ProjectDocument } from '../document/types.js';
import { analyze } from '../document/validate.js';
import { insertBuffers } from './buffers.js';
import { compile } from './compile.js';
import { allPrograms, bufferNodes, colorGroups, hostPrograms, lastStartCycle, peProgram, programBytes, programHosts, programIndex } from './decode.js';
import { assignDepth } from './depth.js';
import { computeLatency } from './latency.js';
import { planPhases } from './phases.js';
import { Router } from './route.js';
import { schedule } from './schedule.js';
import type { BufferNode, ImplementationGraph } from './types.js';

const example = (name: string): ProjectDocument => JSON.parse(readFileSync(new URL(`../../../../examples/${name}.json`, import.meta.url), 'utf8'));

function model(doc: ProjectDocument): Model {
  const { model, diagnostics } = analyze(doc);
  if (!model) throw new Error(diagnostics.map((d) => d.message).join('\n'));
  return model;
}

function ig(doc: ProjectDocument, overlap: boolean): ImplementationGraph {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.ig;
}

const show = (b: BufferNode) => `${b.id} ${b.pe} ${b.source}`;
// Buffer insertion's columns as objects, before the later passes (and the IG) exist.
const inserted = (m: Model) => {
  const { order, nodes } = schedule(m);
  const insertion = insertBuffers(m, nodes, new Router(m));
  const objects = () => bufferNodes({ order, buffers: insertion.buffers, programs: { pes: m.pes.map((pe) => ({ pe: pe.id })) } });
  return { order, nodes, ...insertion, objects };
};

describe('schedule (paper 4.2.1)', () => {
  it('schedules a node only after its predecessors, counting in document order', () => {
    const m = model(example('paper-fig5'));
    const s = schedule(m);
    expect(s.order).toEqual(['p', 'a', 'b', 'c1', 'c2', 'd', 'e', 'f', 'c3']);
    expect(s.schedule).toMatchObject({ p: 0, a: 1, b: 2, e: 6, c3: 8 });
  });

  it('schedules predecessors first even when listed later', () => {
    const doc = example('piic');
    doc.app.nodes.reverse();
    expect(schedule(model(doc)).order).toEqual(['P', 'I1', 'I2', 'C']);
  });
});

describe('route', () => {
  it('takes the fastest path for the size, then the fewest hops, then the lowest PE ids', () => {
    const doc = example('paper-fig5');
    const m = model(doc);
    const r = new Router(m);
    expect(r.route('gpu1@h0' as never, 'gpu0@h1' as never, 4 << 20).pes).toEqual(['gpu1@h0', 'cpu@h0', 'cpu@h1', 'gpu0@h1']);
    // An NVLink between two GPUs beats the two PCIe hops through the CPU.
    (doc.arch.links ??= []).push({ a: 'gpu0@h0', b: 'gpu1@h0', kind: 'nvlink', bandwidth: 2e10, latency: 1e-6, duplex: true });
    expect(new Router(model(doc)).route('gpu1@h0' as never, 'gpu0@h0' as never, 4 << 20).pes).toEqual(['gpu1@h0', 'gpu0@h0']);
  });

  it('prefers a low-latency link for small data and a wide one for large data', () => {
    const doc = example('piic');
    (doc.arch.links ??= []).push({ a: 'cpu@h0', b: 'cpu@h1', kind: 'ethernet', bandwidth: 1e8, latency: 1e-7, duplex: true });
    const r = new Router(model(doc));
    expect(r.route('cpu@h0' as never, 'cpu@h1' as never, 4).links[0].kind).toBe('ethernet');
    expect(r.route('cpu@h0' as never, 'cpu@h1' as never, 1 << 24).links[0].kind).toBe('infiniband');
  });

  it('breaks exact ties by hop count, then by PE id sequence', () => {
    const doc = example('piic');
    const l = (a: string, b: string, latency: number) => ({ a, b, kind: 'ethernet' as const, bandwidth: 1e9, latency, duplex: true });
    doc.arch = {
      hosts: [{ id: 'h' }],
      pes: ['x', 'y0', 'y1', 'z', 'zz'].map((id) => ({ id, host: 'h', kind: 'cpu' as const, memory: 1e9 })),
      // x -> z in 2 ms: via y1, y0 or zz (2 hops each), or via zz then y0 (3 hops: 0.5 + 0.5 + 1 ms).
      links: [l('x', 'y1', 1e-3), l('y1', 'z', 1e-3), l('x', 'y0', 1e-3), l('y0', 'z', 1e-3), l('x', 'zz', 5e-4), l('zz', 'y0', 5e-4), l('zz', 'z', 1.5e-3)],
    };
    doc.mapping = { P: 'x', I1: 'x', I2: 'x', C: 'z' };
    const r = new Router(model(doc));
    expect(r.route('x' as never, 'z' as never, 0 + 1).pes).toEqual(['x', 'y0', 'z']);
    // Determinism: the same answer from a fresh router with the links listed the other way round.
    doc.arch.links.reverse();
    expect(new Router(model(doc)).route('x' as never, 'z' as never, 1).pes).toEqual(['x', 'y0', 'z']);
  });
});

describe('route between the CPU PEs of one host (cpus: N)', () => {
  // piic's two hosts with four CPU PEs each; the GPUs and the network meet cpu0.
  const cores = () => {
    const doc = example('piic');
    for (const h of doc.arch.hosts) h.cpus = 4;
    doc.mapping = { P: 'cpu0@h0', I1: 'gpu0@h0', I2: 'gpu0@h1', C: 'cpu0@h1' };
    return doc;
  };

  it('takes the direct memory link between two cores, never a path through cpu0, a GPU or the network', () => {
    const r = new Router(model(cores()));
    for (const bytes of [4, 1 << 24]) {
      const route = r.route('cpu1@h0' as never, 'cpu3@h0' as never, bytes);
      expect(route.pes).toEqual(['cpu1@h0', 'cpu3@h0']);
      expect(route.links.map((l) => l.kind)).toEqual(['memory']);
      expect(route.time).toBeCloseTo(1e-6 + bytes / 10e9, 15);
    }
    // Even where the network is faster than the host's memory links (a slow `memory` override).
    const doc = cores();
    doc.arch.hosts[0].memory = { bandwidth: 1e8, latency: 1e-3 };
    doc.arch.network = { kind: 'infiniband', bandwidth: 1e12, latency: 0 };
    expect(new Router(model(doc)).route('cpu1@h0' as never, 'cpu2@h0' as never, 1 << 20).pes).toEqual(['cpu1@h0', 'cpu2@h0']);
  });

  it("reaches the host's GPU and other hosts through cpu0", () => {
    const r = new Router(model(cores()));
    expect(r.route('cpu2@h0' as never, 'gpu0@h0' as never, 1 << 20).links.map((l) => l.kind)).toEqual(['memory', 'pcie']);
    expect(r.route('cpu2@h0' as never, 'cpu1@h1' as never, 1 << 20).pes).toEqual(['cpu2@h0', 'cpu0@h0', 'cpu0@h1', 'cpu1@h1']);
  });

  it('P -> I -> C on three cores of one host: two memory copies in the one intra-host phase', () => {
    const doc = cores();
    doc.mapping = { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu1@h0', C: 'cpu2@h0' };
    const g = ig(doc, false);
    expect(g.phases).toEqual(['pcie', 'fire']);
    const links = Object.values(allPrograms(g)).flatMap((p) =>
      p.phases.flatMap((f) => f.actions.filter((a) => a.op === 'transfer').map((a) => `${a.fromPe}->${a.toPe} ${a.link.kind} ${f.name}`)),
    );
    expect([...new Set(links)].sort()).toEqual(['cpu0@h0->cpu1@h0 memory pcie', 'cpu1@h0->cpu2@h0 memory pcie']);
  });
});

describe('buffer insertion (paper 4.2.2)', () => {
  it('puts a buffer on the producer PE for every node output, bn_0..bn_5 in schedule order', () => {
    const m = model(example('paper-fig5'));
    const bs = inserted(m).objects();
    expect(bs.slice(0, 6).map(show)).toEqual(['bn_0 cpu@h0 p', 'bn_1 gpu0@h0 a', 'bn_2 gpu1@h0 b', 'bn_3 gpu0@h1 d', 'bn_4 gpu0@h1 e', 'bn_5 gpu0@h1 f']);
  });

  it('b->c1 and b->c2 share the path through cpu@h0: bn_2, bn_9, bn_10, bn_11', () => {
    const m = model(example('paper-fig5'));
    const bs = inserted(m).objects();
    const ofB = bs.filter((b) => b.source === 'b');
    expect(ofB.map(show)).toEqual(['bn_2 gpu1@h0 b', 'bn_9 cpu@h0 b', 'bn_10 cpu@h1 b', 'bn_11 gpu0@h1 b']);
    expect(ofB.map((b) => b.next)).toEqual([['bn_9'], ['bn_10'], ['bn_11'], []]);
    expect(ofB[1].consumers).toEqual([{ node: 'c1', port: 'in' }]);
    expect(ofB[3].consumers.map((c) => c.node)).toEqual(['c2', 'd', 'f']);
  });

  it('inserts no buffer between nodes on the same PE', () => {
    const doc = example('piic');
    doc.mapping = { P: 'cpu@h0', I1: 'cpu@h0', I2: 'cpu@h0', C: 'cpu@h0' };
    const m = model(doc);
    expect(inserted(m).objects().map(show)).toEqual(['bn_0 cpu@h0 P', 'bn_1 cpu@h0 I1', 'bn_2 cpu@h0 I2']);
  });
});

describe('depth (paper 4.2.3)', () => {
  it('doubles buffers that send or receive across PEs with overlap, and only then', () => {
    const m = model(example('paper-fig5'));
    const { buffers, objects } = inserted(m);
    assignDepth(buffers, true);
    expect(
      objects()
        .filter((b) => b.depth === 1)
        .map((b) => b.id),
    ).toEqual(['bn_3', 'bn_4', 'bn_5']);
    assignDepth(buffers, false);
    expect(objects().every((b) => b.depth === 1)).toBe(true);
  });
});

describe('latency (paper 4.2.5)', () => {
  it('with overlap each double buffer on the path adds one cycle: P-I-I-C is 0, 2, 6, 8', () => {
    expect(ig(example('piic'), true).latency).toEqual({ P: 0, I1: 2, I2: 6, C: 8 });
  });

  it('without overlap a pair of buffers on different PEs adds one cycle, except cpu-cpu then pcie in one cycle: 0, 1, 3, 4', () => {
    expect(ig(example('piic'), false).latency).toEqual({ P: 0, I1: 1, I2: 3, C: 4 });
  });

  it('keeps an early input in a deeper buffer until its late sibling arrives', () => {
    // x (cpu@h0) feeds e.a directly and e.b through gpu0@h0 and back: the direct input waits.
    const doc = example('piic');
    const size = { width: 4, height: 4 };
    doc.app = {
      nodes: [
        { id: 'x', kernel: 'matrix.produce', params: size },
        { id: 'g', kernel: 'matrix.increment', params: size },
        { id: 'e', kernel: 'matrix.add', params: size },
      ],
      edges: [
        { from: { node: 'x', port: 'out' }, to: { node: 'g', port: 'in' } },
        { from: { node: 'x', port: 'out' }, to: { node: 'e', port: 'a' } },
        { from: { node: 'g', port: 'out' }, to: { node: 'e', port: 'b' } },
      ],
    };
    doc.mapping = { x: 'cpu@h0', g: 'gpu0@h0', e: 'cpu@h0' };
    const m = model(doc);
    const { nodes, buffers: bs, table, objects } = inserted(m);
    assignDepth(bs, true);
    const lat = computeLatency(m, nodes, bs, table, planPhases(m, nodes, bs, table, true), true);
    expect(lat.latency).toEqual({ x: 0, g: 2, e: 4 });
    const e = m.node.get('e' as never)!;
    const fed = Array.from(m.inputs.edge.subarray(m.inputs.start[e.index], m.inputs.start[e.index + 1]));
    expect(fed.map((k) => ({ port: m.edges.toPort[k], buffer: bs.id[table.read[k]], lag: lat.inputLag[k] }))).toEqual([
      { port: 'a', buffer: 'bn_0', lag: 4 },
      { port: 'b', buffer: 'bn_4', lag: 1 },
    ]);
    expect(objects().find((b) => b.id === 'bn_0')!.depth).toBe(5);
  });
});

describe('memory (paper 4.2.4)', () => {
  it('allocates 2 x 16 MB per PE for P-I-I-C without overlap and twice that with (Fig 14)', () => {
    const mib16 = 16 * 2 ** 20;
    for (const [overlap, want] of [
      [false, 2 * mib16],
      [true, 4 * mib16],
    ] as const) {
      const g = ig(example('piic'), overlap);
      for (const pe of ['cpu@h0', 'gpu0@h0', 'gpu0@h1', 'cpu@h1']) expect(g.memory[pe as never].after, `${pe} ${overlap}`).toBe(want);
    }
  });

  it('shares storage between buffers never live together on a PE', () => {
    // A chain on one GPU: a -> b -> c -> d; a's and c's outputs are never live together.
    const doc = example('piic');
    doc.app.nodes.splice(3, 0, { id: 'I3', kernel: 'matrix.increment', params: { width: 2048, height: 2048 } });
    doc.app.edges = [
      { from: { node: 'P', port: 'out' }, to: { node: 'I1', port: 'in' } },
      { from: { node: 'I1', port: 'out' }, to: { node: 'I2', port: 'in' } },
      { from: { node: 'I2', port: 'out' }, to: { node: 'I3', port: 'in' } },
      { from: { node: 'I3', port: 'out' }, to: { node: 'C', port: 'in' } },
    ];
    doc.mapping = { P: 'gpu0@h0', I1: 'gpu0@h0', I2: 'gpu0@h0', I3: 'gpu0@h0', C: 'gpu0@h0' };
    const g = ig(doc, false);
    const m = g.memory['gpu0@h0' as never];
    expect(m.before).toBe(4 * 16 * 2 ** 20);
    expect(m.after).toBe(2 * 16 * 2 ** 20);
    expect(m.lowerBound).toBe(2 * 16 * 2 ** 20);
    expect(m.colorBytes).toEqual([16 * 2 ** 20, 16 * 2 ** 20]);
    expect(
      colorGroups(g)
        [programIndex(g, 'gpu0@h0')].map((c) => c.buffers.join(' '))
        .sort(),
    ).toEqual(['bn_0 bn_2', 'bn_1 bn_3']);
  });
});

describe('programs (paper 4.3)', () => {
  it('gives every PE the same phases: cpu-cpu, pcie, fire without overlap; overlap with', () => {
    for (const overlap of [false, true]) {
      const g = ig(example('piic'), overlap);
      for (const p of Object.values(allPrograms(g))) expect(p.phases.map((ph) => ph.name)).toEqual(overlap ? ['overlap'] : ['cpu-cpu', 'pcie', 'fire']);
    }
  });

  it('splits a chain of copies inside one phase into ordered sub-phases', () => {
    // a -> b is gpu0@h0 -> cpu@h0 -> gpu1@h0: two pcie copies in a row.
    const g = ig(example('paper-fig5'), false);
    expect(g.phases).toEqual(['cpu-cpu', 'pcie#0', 'pcie#1', 'fire']);
    const phaseOf = (to: string) =>
      g.phases[peProgram(g, 'cpu@h0').phases.findIndex((ph) => ph.actions.some((x) => x.op === 'transfer' && x.to.buffer === to))];
    expect([phaseOf('bn_7'), phaseOf('bn_8')]).toEqual(['pcie#0', 'pcie#1']);
    expect(g.latency).toMatchObject({ a: 1, b: 2 });
  });

  it('lists a transfer in the programs of both PEs it connects, with the same content', () => {
    const g = ig(example('piic'), false);
    const t = (pe: string) =>
      peProgram(g, pe)
        .phases.flatMap((ph) => ph.actions)
        .filter((a) => a.op === 'transfer' && a.to.buffer === 'bn_5');
    expect(t('cpu@h0')).toEqual(t('cpu@h1'));
    expect(t('cpu@h0')).toEqual([
      {
        op: 'transfer',
        from: { buffer: 'bn_4', lag: 1 },
        to: { buffer: 'bn_5', lag: 0 },
        fromPe: 'cpu@h0',
        toPe: 'cpu@h1',
        bytes: 16 * 2 ** 20,
        startCycle: 3,
        link: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
      },
    ]);
  });

  it('keeps them compact: one entry per action, decoded into what agents run', () => {
    const g = ig(example('piic'), true);
    const { pes, start, list, transfer } = g.programs;
    // Every transfer is listed by both its PEs, every firing by its own.
    const transfers = g.buffers.parent.filter((p) => p >= 0).length;
    expect(list.length).toBe(2 * transfers + g.order.length);
    expect(start.length).toBe(pes.length * g.phases.length + 1);
    expect([...list].filter((e) => e >= 0).every((e) => transfer.from[e] >= 0)).toBe(true);
    // Decoded all at once, a transfer is one object in both its PEs' programs.
    const all = allPrograms(g);
    const sent = all['cpu@h0' as never].phases[0].actions.find((a) => a.op === 'transfer' && a.toPe === 'cpu@h1');
    expect(sent).toBeDefined();
    expect(all['cpu@h1' as never].phases[0].actions).toContain(sent);
    const starts = Object.values(all).flatMap((p) => p.phases.flatMap((ph) => ph.actions.map((a) => (a.op === 'barrier' ? 0 : a.startCycle))));
    expect(lastStartCycle(g)).toBe(Math.max(...starts));
    expect(programHosts(g)).toEqual(['h0', 'h1']);
    expect(hostPrograms(g, ['h1']).map((p) => p.pe)).toEqual(pes.filter((p) => p.host === 'h1').map((p) => p.pe));
    const mem = g.memory['gpu0@h0' as never];
    expect(programBytes(g, programIndex(g, 'gpu0@h0')).total).toBe(mem.after);
    expect(() => peProgram(g, 'gpu9@h9')).toThrow(/no program for PE gpu9@h9/);
  });

  it("fires each PE's nodes in schedule order with start cycles and slot lags", () => {
    const g = ig(example('piic'), true);
    const fires = peProgram(g, 'gpu0@h1').phases[0].actions.filter((a) => a.op === 'fire');
    expect(fires).toEqual([
      {
        op: 'fire',
        node: 'I2',
        kernel: 'matrix.increment',
        params: { width: 2048, height: 2048, nb_loop: 100 },
        startCycle: 6,
        inputs: { in: { buffer: 'bn_6', lag: 1 } },
        outputs: { out: { buffer: 'bn_2', lag: 0 } },
      },
    ]);
  });
});
