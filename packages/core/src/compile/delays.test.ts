import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { type AppEdge, type ProjectDocument, SYNC_MODES } from '../document/types.js';
import type { BufferId } from '../ids.js';
import { predict } from '../predict/predict.js';
import { sdfDocument } from '../testing/sdf.js';
import { compile } from './compile.js';
import { allPrograms, bufferNodes } from './decode.js';
import { simulate } from './simulate.js';
import type { ImplementationGraph, InitialFill } from './types.js';
import { MAX_DELAY } from '../document/schema.js';

// Delays and feedback in static mode: loops through delayed edges compile when their data
// goes round in no more cycles than they have iterations of delay, the initial tokens sit in
// the slots the consumer reads first, and the programs simulate exactly in both sync modes.

const M = { width: 8, height: 8 };
const cluster = {
  hosts: [
    { id: 'h0', cpus: 1, gpus: 1 },
    { id: 'h1', cpus: 1, gpus: 1 },
  ],
  pes: [],
  links: [],
  network: { kind: 'infiniband' as const, bandwidth: 2.6e9, latency: 2e-6 },
};
const edge = (from: string, to: string, extra: Partial<AppEdge> = {}): AppEdge => {
  const [a, p] = from.split('.');
  const [b, q] = to.split('.');
  return { from: { node: a, port: p }, to: { node: b, port: q }, ...extra };
};

/** acc_k = acc_{k-1} + x_k: P (x_k) -> A (matrix.add) with A.out -> A.b delayed, -> C. */
function accumulator(mapA: string, overlap: boolean, init: AppEdge['init'] = 0): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'accumulator',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: M },
        { id: 'A', kernel: 'matrix.add', params: M },
        { id: 'C', kernel: 'matrix.consume', params: M },
      ],
      edges: [edge('P.out', 'A.a'), edge('A.out', 'A.b', { delay: 1, init }), edge('A.out', 'C.in')],
    },
    arch: cluster,
    mapping: { P: 'cpu@h0', A: mapA, C: 'cpu@h1' },
    options: { overlap, iterations: 20 },
  };
}

/** A (h0) -> B (h1) -> A through a delay d: a loop across hosts. */
function crossLoop(d: number, overlap: boolean): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'loop across hosts',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: M },
        { id: 'A', kernel: 'matrix.add', params: M },
        { id: 'B', kernel: 'matrix.increment', params: { ...M, nb_loop: 0 } },
        { id: 'C', kernel: 'matrix.consume', params: M },
      ],
      edges: [edge('P.out', 'A.a'), edge('A.out', 'B.in'), edge('B.out', 'A.b', { delay: d, init: 0 }), edge('A.out', 'C.in')],
    },
    arch: cluster,
    mapping: { P: 'cpu@h0', A: 'gpu0@h0', B: 'gpu0@h1', C: 'cpu@h1' },
    options: { overlap, iterations: 20 },
  };
}

/** A fill per slot: a range fill's slots, each with its own token (a source kernel's). */
const perSlot = (fills: readonly InitialFill[]) =>
  fills.flatMap(({ count, ...f }) =>
    Array.from({ length: count ?? 1 }, (_, i) => ({ ...f, slot: f.slot + i, ...(f.token === undefined ? {} : { token: f.token + i }) })),
  );

/**
 * Every buffer holding initial tokens has its d initial iterations in the slots its writer would
 * have filled in the d cycles before its first: iteration -j in slot (written - j) mod slots,
 * which a source kernel's fill makes as token d - j.
 */
function expectInitialSlots(ig: ImplementationGraph): void {
  const programs = allPrograms(ig);
  const { buffers } = ig;
  for (const p of Object.values(programs)) {
    const byBuffer = new Map<BufferId, ReturnType<typeof perSlot>>();
    for (const f of perSlot(p.initial ?? [])) byBuffer.set(f.buffer, [...(byBuffer.get(f.buffer) ?? []), f]);
    for (const [id, fills] of byBuffer) {
      const k = buffers.id.indexOf(id);
      const slots = p.allocations.find((a) => a.buffers.includes(id))!.depth;
      const written = buffers.parent[k] >= 0 ? ig.programs.transfer.startCycle[k] : ig.programs.fire.startCycle[buffers.source[k]];
      const d = buffers.initial[k];
      const want = Array.from({ length: d }, (_, i) => ({ slot: (((written - (d - i)) % slots) + slots) % slots, token: i }));
      expect(fills.map((f) => ({ slot: f.slot, token: f.token ?? want.find((w) => w.slot === f.slot)!.token })).sort((a, b) => a.token - b.token)).toEqual(
        want,
      );
    }
  }
}

function ok(doc: unknown): ImplementationGraph {
  const r = compile(doc);
  if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
  return r.ig;
}

function exact(ig: ImplementationGraph, iterations: number, seed = 1): void {
  for (const sync of SYNC_MODES) {
    for (const s of sync === 'barrier' ? [0] : [seed, seed + 1]) {
      const sim = simulate(ig, iterations, { sync, seed: s });
      expect(sim.violations, sync).toEqual([]);
      for (const n of ig.order) expect(sim.fires[n], `${sync} ${n}`).toBe(iterations);
    }
  }
}

describe('delays: loops in static mode', () => {
  for (const overlap of [false, true]) {
    it(`an accumulator (a self-loop with one delay) on another host's GPU: lag 1, the initial slot filled, exact in both sync modes (overlap ${overlap})`, () => {
      const ig = ok(accumulator('gpu0@h1', overlap));
      const loop = bufferNodes(ig).find((b) => b.source === 'A' && b.pe === 'gpu0@h1')!;
      expect(loop.depth).toBe(2);
      const fills = allPrograms(ig)['gpu0@h1' as never].initial;
      // Iteration -1 is where A wrote in the cycle before its first: its slot is filled with 0.
      expect(fills).toEqual([{ buffer: loop.id, slot: (ig.latency['A' as never] - 1 + 2) % 2, value: 0 }]);
      exact(ig, 20);
    });

    it(`a loop across hosts with too small a delay is refused, naming the loop, its PEs and the delay it needs; that delay compiles and runs exactly (overlap ${overlap})`, () => {
      const r = compile(crossLoop(1, overlap));
      expect(r.ok).toBe(false);
      const d = r.diagnostics.find((x) => x.path === 'app.edges[2].delay')!;
      const need = overlap ? 8 : 4;
      expect(d.message).toContain(
        `the loop A -> B -> A carries 1 iteration of initial tokens, but its data takes ${need} cycles to go round on gpu0@h0, gpu0@h1`,
      );
      expect(d.hint).toContain(`raise the delay to ${need}`);
      const ig = ok(crossLoop(need, overlap));
      // The initial iterations sit in distinct slots of the buffer A reads.
      const fills = perSlot(Object.values(allPrograms(ig)).flatMap((p) => p.initial ?? []));
      expect(new Set(fills.map((f) => f.slot)).size).toBe(need);
      expectInitialSlots(ig);
      exact(ig, 20);
      expect(compile(crossLoop(need - 1, overlap)).ok).toBe(false);
    });
  }

  it('a loop on one PE takes no cycle round: any delay of one or more compiles', () => {
    const doc = crossLoop(1, true);
    doc.mapping = { P: 'cpu@h0', A: 'gpu0@h0', B: 'gpu0@h0', C: 'cpu@h1' };
    exact(ok(doc), 12);
  });

  it('a source node as init: it leaves the graph and its kernel fills the initial tokens, token by token', () => {
    const doc = crossLoop(4, false);
    doc.app.nodes.push({ id: 'seed', kernel: 'matrix.produce', params: M });
    doc.app.edges[2].init = { node: 'seed' };
    const ig = ok(doc);
    expect(ig.order).not.toContain('seed');
    const fills = perSlot(Object.values(allPrograms(ig)).flatMap((p) => p.initial ?? []));
    expect(fills.map((f) => f.token).sort()).toEqual([0, 1, 2, 3]);
    expectInitialSlots(ig);
    expect(fills.every((f) => f.kernel === 'matrix.produce' && f.port === 'out' && f.params?.width === 8)).toBe(true);
    exact(ig, 10);
  });

  it('a delayed forward edge (no loop) reads the producer d iterations late', () => {
    const doc = accumulator('gpu0@h1', true);
    doc.app.edges = [edge('P.out', 'A.a'), edge('P.out', 'A.b', { delay: 3, init: 1 }), edge('A.out', 'C.in')];
    exact(ok(doc), 10);
  });
});

describe('delays: predictions', () => {
  it("self-timed: a loop's consumer starts iteration i only after the data of iteration i - delay came round, and the cycle covers its time round over the delay", () => {
    const doc = crossLoop(4, false);
    doc.app.nodes = doc.app.nodes.map((n) => ({ ...n, params: { ...n.params, width: 1024, height: 1024 } }));
    const r = predict(doc, { sync: 'self-timed', iterations: 12 });
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    const s = r.prediction.noOverlap!;
    const back = bufferNodes(s.ig).find((b) => b.source === 'B' && b.pe === 'gpu0@h0')!;
    const arrived = new Map(s.timeline.filter((e) => e.kind === 'transfer' && e.name === back.id).map((e) => [e.iteration, e.end]));
    const fires = s.timeline.filter((e) => e.kind === 'fire' && e.node === 'A');
    expect(fires.length).toBeGreaterThan(4);
    for (const f of fires) if (f.iteration! >= 4) expect(f.start).toBeGreaterThanOrEqual(arrived.get(f.iteration! - 4)!);
    // The actions round the loop (two firings, six copies) take at most 4 cycles' worth.
    const sourceOf = new Map(bufferNodes(s.ig).map((b) => [b.id as string, b.source as string]));
    const onLoop = (node?: string) => node === 'A' || node === 'B';
    // Each action once (a copy between hosts is drawn on both of its lanes).
    const actions = new Map(
      s.timeline
        .filter((e) => e.iteration === 0 && (e.kind === 'fire' ? onLoop(e.node) : e.kind === 'transfer' && onLoop(sourceOf.get(e.name))))
        .map((e) => [`${e.kind} ${e.name}`, e.end - e.start]),
    );
    const round = [...actions.values()].reduce((t, x) => t + x, 0);
    expect(s.cycleTime * 1e6 * 4).toBeGreaterThanOrEqual(round * 0.999 - 1e-9);
  });

  it('a strategy the document does not choose may be impossible: predicted without it, and why', () => {
    const r = predict(crossLoop(4, false));
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    expect(r.prediction.noOverlap).toBeDefined();
    expect(r.prediction.overlap).toBeUndefined();
    expect(r.prediction.unavailable?.overlap?.[0].hint).toContain('raise the delay to 8');
    // The document's own strategy impossible: refused.
    const own = crossLoop(4, true);
    expect(predict(own).ok).toBe(false);
  });
});

describe('delays: mistakes', () => {
  const messages = (doc: unknown) => {
    const r = compile(doc);
    return r.ok ? [] : r.diagnostics.map(formatDiagnostic);
  };

  it('a cycle without a delay is named, with the fix', () => {
    const doc = crossLoop(1, false);
    delete doc.app.edges[2].delay;
    delete doc.app.edges[2].init;
    expect(messages(doc)).toContain(
      'app.edges: cycle A -> B -> A has no delay: no node of it can fire first (give one of its edges initial tokens ("delay": 1 and an "init"), or remove one of these edges)',
    );
  });

  it('a delay without init, an init without delay', () => {
    const doc = crossLoop(4, false);
    delete doc.app.edges[2].init;
    expect(messages(doc)[0]).toMatch(/^app\.edges\[2\]: the edge B\.out -> A\.b has a delay of 4 but no init/);
    const doc2 = accumulator('gpu0@h1', false);
    doc2.app.edges[2].init = 0;
    expect(messages(doc2)[0]).toMatch(/^app\.edges\[2\]\.init: the edge A\.out -> C\.in has an init but no delay/);
  });

  it('an init of the wrong type: a value the element type cannot hold, a source of another size, a node with inputs', () => {
    const big = crossLoop(4, false);
    big.app.nodes.push({ id: 'seed', kernel: 'matrix.produce', params: { width: 16, height: 8 } });
    big.app.edges[2].init = { node: 'seed' };
    expect(messages(big)[0]).toBe(
      'app.edges[2].init: init node "seed" makes matrix<f32>[8x16] but the initial tokens of B.out -> A.b are matrix<f32>[8x8] (give "seed" the size params of "B")',
    );
    const withInput = crossLoop(4, false);
    withInput.app.edges[2].init = { node: 'C' };
    expect(messages(withInput)[0]).toMatch(
      /^app\.edges\[2\]\.init\.node: the edge B\.out -> A\.b: init node "C" \(matrix\.consume\) has 1 input and 0 outputs; an init runs a source/,
    );
    const missing = crossLoop(4, false);
    missing.app.edges[2].init = { node: 'sead' };
    expect(messages(missing)[0]).toMatch(/init node "sead" does not exist/);
  });

  it('two delayed readers of one buffer with different initial values are refused, naming both edges', () => {
    const doc = accumulator('gpu0@h1', false);
    doc.app.nodes.push({ id: 'D', kernel: 'matrix.add', params: M });
    doc.mapping.D = 'gpu0@h1';
    doc.app.edges.push(edge('A.out', 'D.a', { delay: 1, init: 5 }), edge('P.out', 'D.b'));
    expect(messages(doc).join('\n')).toMatch(
      /app\.edges\[3\]\.init: the initial tokens of this edge and of app\.edges\[1\] are read from one buffer of A\.out on gpu0@h1, but their values differ \(the constant 5 here, the constant 0 there\)/,
    );
  });
});

describe('delays: large values', () => {
  /** The loop across hosts with one-element tokens, so that even 2^30 of them fit a GPU's memory (4 GiB of 16). */
  const small = (d: number, overlap: boolean) => {
    const doc = crossLoop(d, overlap);
    doc.app.nodes = doc.app.nodes.map((n) => ({ ...n, params: { ...n.params, width: 1, height: 1 } }));
    return doc;
  };
  const fillsOf = (ig: ImplementationGraph) => Object.values(allPrograms(ig)).flatMap((p) => p.initial ?? []);
  const counted = (fills: InitialFill[]) => fills.reduce((n, f) => n + (f.count ?? 1), 0);

  for (const overlap of [false, true]) {
    it(`8, 2^20 and 2^30 (the most allowed) initial tokens compile to the same structure: one or two range fills, never one per token (overlap ${overlap})`, () => {
      const shape = (ig: ImplementationGraph) => ({ buffers: ig.buffers.count, order: ig.order, fills: fillsOf(ig).length });
      const base = ok(small(8, overlap));
      for (const d of [2 ** 20, MAX_DELAY]) {
        const ig = ok(small(d, overlap));
        const fills = fillsOf(ig);
        expect(fills.length).toBeLessThanOrEqual(2);
        expect(counted(fills)).toBe(d);
        expect(shape(ig)).toEqual(shape(base));
        expect(JSON.stringify(ig.programs.initial).length).toBeLessThan(400);
        // The buffer A reads holds the d initial iterations: d slots or more, counted, not made.
        const back = bufferNodes(ig).find((b) => b.id === fills[0].buffer)!;
        expect(back.depth).toBeGreaterThanOrEqual(d);
        expect(ig.memory['gpu0@h0' as never].after).toBeGreaterThanOrEqual(4 * d);
        // A run shorter than the delay reads initial tokens throughout, in both sync modes.
        exact(ig, 6);
      }
      // The delay the loop needs still runs exactly over more iterations than it has tokens.
      expectInitialSlots(base);
      exact(base, 20);
    });
  }

  it("a delay deeper than agents' slots per buffer compiles with a warning at the edge: task-bag mode, or the largest delay that fits, which does", () => {
    const warnings = (doc: ProjectDocument) => {
      const r = compile(doc);
      if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
      return r.diagnostics.filter((d) => d.severity === 'warning');
    };
    const [w] = warnings(small(2 ** 20, false));
    expect(w.path).toBe('app.edges[2].delay');
    expect(w.message).toMatch(
      /^static mode keeps this edge's 1048576 iterations of initial tokens in \d+ slots of buffer bn_\d+ on gpu0@h0; agents hold at most 256 slots per buffer, so they refuse a static run of it$/,
    );
    const fits = Number(/lower the delay to at most (\d+) iterations/.exec(w.hint!)![1]);
    expect(w.hint).toContain('run it in task-bag mode');
    expect(warnings(small(fits, false))).toEqual([]);
    expect(warnings(small(fits + 1, false))).toHaveLength(1);
    const bag = small(2 ** 20, false);
    bag.options = { ...bag.options, mode: 'taskbag' };
    expect(warnings(bag)).toEqual([]);
  });

  it('a source node init at the bound: two ranges at most, tokens counted on from the first', () => {
    const doc = small(MAX_DELAY, false);
    doc.app.nodes.push({ id: 'seed', kernel: 'matrix.produce', params: { width: 1, height: 1 } });
    doc.app.edges[2].init = { node: 'seed' };
    const fills = fillsOf(ok(doc));
    expect(fills.length).toBeLessThanOrEqual(2);
    expect(fills[0].token).toBe(0);
    if (fills[1]) expect(fills[1]).toMatchObject({ slot: 0, token: fills[0].count ?? 1 });
    expect(counted(fills)).toBe(MAX_DELAY);
  });

  it('predictions of a delay at the bound, in both sync modes, keep only the iterations they simulate', () => {
    for (const sync of SYNC_MODES) {
      const r = predict(small(MAX_DELAY, false), { sync, iterations: 50 });
      if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
      expect(r.prediction.noOverlap!.cycleTime, sync).toBeGreaterThan(0);
    }
  });

  it('a delay above 2^30 is refused naming the edge as written, with the bound and the fix; so are a fraction and a negative', () => {
    const messages = (d: unknown, params?: ProjectDocument['params']) => {
      const doc = small(8, false);
      doc.app.edges[2].delay = d as number;
      if (params) doc.params = params;
      const r = compile(doc);
      return r.ok ? [] : r.diagnostics.map(formatDiagnostic);
    };
    for (const d of [MAX_DELAY + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53]) {
      expect(messages(d)).toEqual([
        `app.edges[2].delay: the edge B.out -> A.b: delay ${d} is more initial tokens than an edge may carry (at most 1073741824, 2^30) (write a delay of at most 1073741824: a run of N iterations reads only the first N initial tokens, so any delay above N reads them throughout)`,
      ]);
    }
    // Through a parameter: the edge that reads it is named.
    expect(messages('2 * D', { D: 2 ** 31 })[0]).toMatch(
      /^app\.edges\[2\]\.delay: the edge B\.out -> A\.b: delay 4294967296 is more initial tokens than an edge may carry/,
    );
    for (const d of [1.5, -1])
      expect(messages(d)).toEqual([
        `app.edges[2].delay: the edge B.out -> A.b: delay ${d} is not a whole number of tokens (write the number of initial tokens on the edge: 0 or more)`,
      ]);
  });
});

describe('delays: random SDF graphs with loops', () => {
  /** Compiles, raising each loop's delay to what its diagnostic names (in tokens), until it compiles. */
  function compiledWithLoops(doc: ProjectDocument): ImplementationGraph {
    for (let round = 0; round < 20; round++) {
      const r = compile(doc);
      if (r.ok) return r.ig;
      const raises = r.diagnostics.map((d) => [/^app\.edges\[(\d+)\]\.delay$/.exec(d.path), /raise the delay to (\d+)/.exec(d.hint ?? '')] as const);
      // Every refusal is a loop that names the delay it needs.
      expect(
        raises.every(([p, h]) => p && h),
        r.diagnostics.map(formatDiagnostic).join('\n'),
      ).toBe(true);
      for (const [p, h] of raises) doc.app.edges[Number(p![1])].delay = Number(h![1]);
    }
    throw new Error('no delay settled');
  }

  it('every loop compiles at the delay its diagnostic names, and every firing reads exactly iteration k - L - delay (initial tokens included), in both sync modes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 9 }),
        fc.integer({ min: 1, max: 2 }),
        fc.boolean(),
        (seed, nodes, hosts, overlap) => {
          const { doc } = sdfDocument(seed, { nodes, hosts, maxGpus: 1, overlap, delays: true, maxRepetition: 3 });
          const ig = compiledWithLoops(doc);
          expectInitialSlots(ig);
          exact(ig, 6, seed);
        },
      ),
      { numRuns: 60 },
    );
  });
});
