import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineKernelSpec, registerKernels } from '@pipeloom/kernels/specs';
import { formatDiagnostic, type Diagnostic } from '../diagnostics.js';
import { sdfDocument } from '../testing/sdf.js';
import { analyze } from './validate.js';
import { lowerDocument, ownPaths } from './lower.js';
import { edgeParts, expandRates } from './rates.js';
import type { AppEdge, AppNode, ProjectDocument } from './types.js';

// A kernel whose output declares its rate from a param (a package's kernel could).
registerKernels(
  [
    defineKernelSpec({
      id: 'test.slicer',
      version: '1.0.0',
      description: 'Makes `slices` tokens of 4 words per firing',
      params: { slices: { type: 'int', default: 4, min: 1, max: 16, description: 'tokens per firing' } },
      outputs: [{ name: 'out', type: (p) => ({ kind: 'bytes', element: 'u32', shape: [4 * Number(p.slices)] }), rate: (p) => Number(p.slices) }],
      cost: () => ({ flops: 0, bytes: 0 }),
    }),
    defineKernelSpec({
      id: 'test.counter',
      version: '1.0.0',
      description: 'Counts its firings',
      stateful: true,
      inputs: [{ name: 'in', type: () => ({ kind: 'bytes', element: 'u32', shape: [4] }) }],
      cost: () => ({ flops: 0, bytes: 0 }),
    }),
  ],
  'rates.test',
);

// A node of generic.work with `inputs` in-ports and `outputs` out-ports of `words` u32 each.
const work = (id: string, inputs: number, outputs: number, rates?: Record<string, number | string>, words = 12): AppNode => ({
  id,
  kernel: 'generic.work',
  params: { inputs, outputs, bytes: 4 * words },
  ...(rates ? { rates } : {}),
});
const edge = (from: string, to: string, extra: Partial<AppEdge> = {}): AppEdge => {
  const [a, ap] = from.split('.');
  const [b, bp] = to.split('.');
  return { from: { node: a, port: ap }, to: { node: b, port: bp }, ...extra };
};

function document(nodes: AppNode[], edges: AppEdge[], mapping?: Record<string, string>): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'rates',
    app: { nodes, edges },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 1 }], pes: [], links: [] },
    mapping: mapping ?? Object.fromEntries(nodes.map((n) => [n.id, 'cpu@h0'])),
    options: { overlap: false, iterations: 4 },
  };
}

/** The rates step alone, on a document's own paths. */
function expand(doc: ProjectDocument) {
  const out: Diagnostic[] = [];
  const { nodePaths, edgePaths } = ownPaths(doc);
  const r = expandRates(doc, nodePaths, edgePaths, out);
  return { ...r, diagnostics: out.map(formatDiagnostic) };
}

const ends = (e: AppEdge) =>
  `${e.from.node}.${e.from.port}${e.fromTokens ? `[${e.fromTokens.first}+${e.fromTokens.count}/${e.fromTokens.of}]` : ''} -> ${e.to.node}.${e.to.port}${e.toTokens ? `[${e.toTokens.first}+${e.toTokens.count}/${e.toTokens.of}]` : ''}${e.delay ? ` delay ${e.delay}` : ''}`;

describe('repetition vector', () => {
  it('1 -> 8 -> 1: a producer of 8 tokens, 8 slices, a consumer of 8 tokens; each slice takes one token and fills one', () => {
    const doc = document(
      [
        { id: 'P', kernel: 'matrix.produce', params: { width: 16, height: 64 }, rates: { out: 8 }, position: { x: 0, y: 0 } },
        { id: 'S', kernel: 'matrix.increment', params: { width: 16, height: 8 }, position: { x: 100, y: 0 } },
        { id: 'C', kernel: 'matrix.consume', params: { width: 16, height: 64 }, rates: { in: 8 } },
      ],
      [edge('P.out', 'S.in'), edge('S.out', 'C.in')],
      { P: 'cpu@h0', S: 'gpu0@h0', 'S#3': 'cpu@h0', C: 'cpu@h0' },
    );
    const { lowered, diagnostics } = lowerDocument(doc);
    expect(diagnostics).toEqual([]);
    expect(lowered!.repetitions).toEqual({ P: 1, S: 8, C: 1 });
    const nodes = lowered!.doc.app.nodes;
    expect(nodes.map((n) => n.id)).toEqual(['P', ...Array.from({ length: 8 }, (_, j) => `S#${j}`), 'C']);
    expect(nodes[4]).toEqual({
      id: 'S#3',
      kernel: 'matrix.increment',
      params: { width: 16, height: 8 },
      position: { x: 172, y: 72 },
      firing: { node: 'S', index: 3, of: 8 },
    });
    expect(nodes[0].rates).toEqual({ out: 8 });
    expect(nodes[9].rates).toEqual({ in: 8 });
    expect(lowered!.doc.app.edges.map(ends)).toEqual([
      ...Array.from({ length: 8 }, (_, j) => `P.out[${j}+1/8] -> S#${j}.in[0+1/1]`),
      ...Array.from({ length: 8 }, (_, j) => `S#${j}.out[0+1/1] -> C.in[${j}+1/8]`),
    ]);
    expect(lowered!.nodePaths).toEqual(['app.nodes[0]', ...Array(8).fill('app.nodes[1]'), 'app.nodes[2]']);
    expect(lowered!.edgePaths).toEqual([...Array(8).fill('app.edges[0]'), ...Array(8).fill('app.edges[1]')]);
    // S maps every firing; the entry S#3 overrides for that firing.
    expect(lowered!.doc.mapping).toEqual({
      P: 'cpu@h0',
      'S#0': 'gpu0@h0',
      'S#1': 'gpu0@h0',
      'S#2': 'gpu0@h0',
      'S#3': 'cpu@h0',
      'S#4': 'gpu0@h0',
      'S#5': 'gpu0@h0',
      'S#6': 'gpu0@h0',
      'S#7': 'gpu0@h0',
      C: 'cpu@h0',
    });
  });

  it('with params and composites: rates from expressions, inner nodes as written, a whole composite and one inner firing mapped', () => {
    const d: ProjectDocument = {
      ...document([], []),
      params: { N: 4, H: 32 },
      defs: {
        slice: {
          params: { K: 1 },
          inputs: [{ name: 'in', to: [{ node: 'inc', port: 'in' }] }],
          outputs: [{ name: 'out', from: { node: 'inc', port: 'out' } }],
          nodes: [{ id: 'inc', kernel: 'matrix.increment', params: { width: 8, height: 'H / N', nb_loop: 'K' } }],
          edges: [],
        },
      },
      app: {
        nodes: [
          { id: 'P', kernel: 'matrix.produce', params: { width: 8, height: 'H' }, rates: { out: 'N' } },
          { id: 's', composite: 'slice' },
          { id: 'C', kernel: 'matrix.consume', params: { width: 8, height: 'H' }, rates: { in: '2 * N / 2' } },
        ],
        edges: [edge('P.out', 's.in'), edge('s.out', 'C.in')],
      },
      mapping: { P: 'cpu@h0', s: 'gpu0@h0', 's/inc#2': 'cpu@h0', C: 'cpu@h0' },
    };
    const { lowered, diagnostics } = lowerDocument(d);
    expect(diagnostics).toEqual([]);
    expect(lowered!.repetitions).toEqual({ P: 1, 's/inc': 4, C: 1 });
    expect(lowered!.doc.app.edges.map(ends)).toEqual([
      ...[0, 1, 2, 3].map((j) => `P.out[${j}+1/4] -> s/inc#${j}.in[0+1/1]`),
      ...[0, 1, 2, 3].map((j) => `s/inc#${j}.out[0+1/1] -> C.in[${j}+1/4]`),
    ]);
    expect(lowered!.doc.mapping).toEqual({ P: 'cpu@h0', 's/inc#0': 'gpu0@h0', 's/inc#1': 'gpu0@h0', 's/inc#2': 'cpu@h0', 's/inc#3': 'gpu0@h0', C: 'cpu@h0' });
    expect(lowered!.nodePaths[1]).toBe('defs.slice.nodes[0]');
    // A bad rate inside a composite is named where it is written.
    const bad = structuredClone(d);
    bad.defs!.slice.nodes[0].rates = { in: 0 };
    expect(lowerDocument(bad).diagnostics.map(formatDiagnostic)).toEqual([expect.stringMatching(/^defs\.slice\.nodes\[0\]\.rates\.in: rate 0/)]);
  });

  it('2 : 3 rates: A fires 3 times, B twice; tokens cross firings where the rates do not line up', () => {
    const { doc, repetitions, diagnostics } = expand(document([work('A', 0, 1, { out0: 2 }), work('B', 1, 0, { in0: 3 })], [edge('A.out0', 'B.in0')]));
    expect(diagnostics).toEqual([]);
    expect(repetitions).toEqual({ A: 3, B: 2 });
    expect(doc!.app.edges.map(ends)).toEqual([
      'A#0.out0[0+2/2] -> B#0.in0[0+2/3]',
      'A#1.out0[0+1/2] -> B#0.in0[2+1/3]',
      'A#1.out0[1+1/2] -> B#1.in0[0+1/3]',
      'A#2.out0[0+2/2] -> B#1.in0[1+2/3]',
    ]);
  });

  it('a diamond: both branches agree on the join; each component is scaled to its smallest integers', () => {
    const nodes = [
      work('A', 0, 2, { out0: 2 }),
      work('B', 1, 1, { out0: 3 }),
      work('C', 1, 1),
      work('D', 2, 0, { in0: 6 }),
      work('X', 0, 1, { out0: 2 }),
      work('Y', 1, 0, { in0: 4 }),
    ];
    const edges = [edge('A.out0', 'B.in0'), edge('A.out1', 'C.in0'), edge('B.out0', 'D.in0'), edge('C.out0', 'D.in1'), edge('X.out0', 'Y.in0')];
    const { repetitions, diagnostics, doc } = expand(document(nodes, edges));
    expect(diagnostics).toEqual([]);
    expect(repetitions).toEqual({ A: 1, B: 2, C: 1, D: 1, X: 2, Y: 1 });
    expect(doc!.app.edges.filter((e) => e.to.node === 'D').map(ends)).toEqual([
      'B#0.out0[0+3/3] -> D.in0[0+3/6]',
      'B#1.out0[0+3/3] -> D.in0[3+3/6]',
      'C.out0 -> D.in1',
    ]);
  });

  it('single rate: nodes and edges stay as written (delays included), the mapping too', () => {
    const d = document(
      [work('a', 0, 1), work('b', 2, 1), work('c', 1, 1)],
      [edge('a.out0', 'b.in0'), edge('b.out0', 'c.in0'), edge('c.out0', 'b.in1', { delay: 3, init: { value: 0 } })],
    );
    const { doc, repetitions } = expand(d);
    expect(repetitions).toEqual({ a: 1, b: 1, c: 1 });
    expect(doc!.app.nodes).toEqual(d.app.nodes);
    d.app.edges.forEach((e, i) => expect(doc!.app.edges[i]).toBe(e));
    expect(doc!.mapping).toBe(d.mapping);
  });

  it('equal rates on both ends of every edge keep one firing per node, whole-port edges, and compile', () => {
    const d = document([work('a', 0, 1, { out0: 4 }), work('b', 1, 0, { in0: 4 })], [edge('a.out0', 'b.in0')]);
    const { lowered } = lowerDocument(d);
    expect(lowered!.repetitions).toEqual({ a: 1, b: 1 });
    expect(lowered!.doc.app.edges.map(ends)).toEqual(['a.out0 -> b.in0']);
    expect(lowered!.doc.app.nodes.map((n) => n.rates)).toEqual([{ out0: 4 }, { in0: 4 }]);
    expect(analyze(d).diagnostics).toEqual([]);
  });

  it("a kernel port may declare its rate (here from a param); the node's rates override it; the lowered node lists both", () => {
    const slicer = (id: string, rates?: Record<string, number>): AppNode => ({ id, kernel: 'test.slicer', params: { slices: 4 }, ...(rates ? { rates } : {}) });
    const own = expand(document([slicer('s'), work('b', 1, 0, undefined, 16)], [edge('s.out', 'b.in0')]));
    expect(own.repetitions).toEqual({ s: 1, b: 4 });
    expect(own.doc!.app.nodes[0].rates).toEqual({ out: 4 });
    const overridden = expand(document([slicer('s', { out: 2 }), work('b', 1, 0, { in0: 1 }, 16)], [edge('s.out', 'b.in0')]));
    expect(overridden.repetitions).toEqual({ s: 1, b: 2 });
    expect(overridden.doc!.app.nodes.map((n) => n.rates)).toEqual([{ out: 2 }, { in0: 1 }, { in0: 1 }]);
  });
});

describe('examples/split-join.json', () => {
  it('lowers to P, S#0..S#7 and C: repetitions 1, 8, 1; P.out token j feeds S#j, S#j fills C.in token j', () => {
    const doc = JSON.parse(readFileSync(new URL('../../../../examples/split-join.json', import.meta.url), 'utf8')) as ProjectDocument;
    const { lowered, diagnostics } = lowerDocument(doc);
    expect(diagnostics).toEqual([]);
    expect(lowered!.repetitions).toEqual({ P: 1, S: 8, C: 1 });
    expect(lowered!.doc.app.nodes.map((n) => n.id)).toEqual(['P', 'S#0', 'S#1', 'S#2', 'S#3', 'S#4', 'S#5', 'S#6', 'S#7', 'C']);
    const edges = lowered!.doc.app.edges;
    expect(edges).toHaveLength(16);
    for (let j = 0; j < 8; j++) {
      expect(edges[j]).toEqual({
        from: { node: 'P', port: 'out' },
        to: { node: `S#${j}`, port: 'in' },
        fromTokens: { first: j, count: 1, of: 8 },
        toTokens: { first: 0, count: 1, of: 1 },
      });
      expect(edges[8 + j]).toEqual({
        from: { node: `S#${j}`, port: 'out' },
        to: { node: 'C', port: 'in' },
        fromTokens: { first: 0, count: 1, of: 1 },
        toTokens: { first: j, count: 1, of: 8 },
      });
    }
    expect(Object.keys(lowered!.doc.mapping)).toEqual(['P', 'S#0', 'S#1', 'S#2', 'S#3', 'S#4', 'S#5', 'S#6', 'S#7', 'C']);
  });
});

describe('stateful kernels', () => {
  it('a stateful node firing several times per iteration is warned about: each firing keeps its own state', () => {
    const { diagnostics, repetitions } = expand(document([work('a', 0, 1, { out0: 2 }), { id: 'k', kernel: 'test.counter' }], [edge('a.out0', 'k.in')]));
    expect(repetitions).toEqual({ a: 1, k: 2 });
    expect(diagnostics).toEqual([
      'warning: app.nodes[1]: node "k" (test.counter) keeps state across firings, and fires 2 times per iteration: each of its 2 firings keeps a state of its own (give it rates that make it fire once per iteration if its state must be one)',
    ]);
  });
});

describe('delays on multi-rate edges', () => {
  it('a firing feeding the next one through a delay of one token: X#1 of the previous iteration feeds X#0', () => {
    // X fires twice (the source makes 2 tokens), X.out0 -> X.in1 carries one initial token.
    const d = document([work('S', 0, 1, { out0: 2 }), work('X', 2, 1)], [edge('S.out0', 'X.in0'), edge('X.out0', 'X.in1', { delay: 1, init: { value: 7 } })]);
    const { doc, diagnostics } = expand(d);
    expect(diagnostics).toEqual([]);
    const loop = doc!.app.edges.filter((e) => e.from.node.startsWith('X'));
    expect(loop.map(ends)).toEqual(['X#1.out0 -> X#0.in1 delay 1', 'X#0.out0 -> X#1.in1']);
    expect(loop[0].init).toEqual({ value: 7 });
    expect(loop[1].init).toBeUndefined();
  });

  it('a delay splits a part where the iteration changes: 3 tokens of delay on a 2 -> 4 edge', () => {
    // T = 4 tokens per iteration: consumer tokens 0..2 read the previous iteration's 1..3, token 3 this one's 0.
    expect(edgeParts(4, 2, 4, 3)).toEqual([
      { producer: 0, fromFirst: 1, consumer: 0, toFirst: 0, count: 1, delay: 1 },
      { producer: 1, fromFirst: 0, consumer: 0, toFirst: 1, count: 2, delay: 1 },
      { producer: 0, fromFirst: 0, consumer: 0, toFirst: 3, count: 1, delay: 0 },
    ]);
    // More initial tokens than an iteration carries: whole iterations back.
    expect(edgeParts(2, 1, 2, 5)).toEqual([
      { producer: 1, fromFirst: 0, consumer: 0, toFirst: 0, count: 1, delay: 3 },
      { producer: 0, fromFirst: 0, consumer: 0, toFirst: 1, count: 1, delay: 2 },
    ]);
  });
});

describe('rate diagnostics', () => {
  it('rate 0, negative, fractional or not a number: named at the rate, with the fix', () => {
    const { diagnostics, doc } = expand(
      document([work('a', 0, 2, { out0: 0, out1: 2.5 }), work('b', 2, 0, { in0: -1, in1: 'N' })], [edge('a.out0', 'b.in0'), edge('a.out1', 'b.in1')]),
    );
    expect(doc).toBeUndefined();
    expect(diagnostics).toEqual([
      'app.nodes[0].rates.out0: rate 0: every firing moves at least one token (the rate is tokens per firing: a positive integer (1, 2, 8, ...))',
      'app.nodes[0].rates.out1: rate 2.5 is not a whole number of tokens (the rate is tokens per firing: a positive integer (1, 2, 8, ...))',
      'app.nodes[1].rates.in0: rate -1: every firing moves at least one token (the rate is tokens per firing: a positive integer (1, 2, 8, ...))',
      'app.nodes[1].rates.in1: rate "N" is not a number (write the tokens per firing as a positive integer, or an expression over the document\'s params)',
    ]);
  });

  it('a rate on a port the node does not have names the ports it has; unknown kernels are left to validate', () => {
    const { diagnostics } = expand(document([work('a', 0, 1, { out: 2 }), { id: 'u', kernel: 'nope.kernel', rates: { x: 2 } }], []));
    expect(diagnostics).toEqual(['app.nodes[0].rates.out: node "a" (generic.work) has no port "out" (its ports: out0 (output))']);
  });

  it("a rate that does not split the port's data evenly along its first dimension", () => {
    const { diagnostics } = expand(document([{ id: 'P', kernel: 'matrix.produce', params: { width: 16, height: 20 }, rates: { out: 8 } }], []));
    expect(diagnostics).toEqual([
      'app.nodes[0].rates.out: rate 8 does not split port out of node "P" into equal tokens: its data matrix<f32>[20x16] has 20 along the first dimension (use a rate that divides 20, or change the node\'s size params)',
    ]);
  });

  it('a token mismatch on an edge into a node firing 8 times is one diagnostic naming the nodes as written, not one per firing', () => {
    const d = document([work('a', 0, 1, { out0: 8 }, 16), work('b', 1, 0, {}, 3)], [edge('a.out0', 'b.in0')]);
    expect(analyze(d).diagnostics.map(formatDiagnostic)).toEqual([
      'app.edges[0]: token type mismatch: a token of a.out0 is bytes<u32>[2] but b.in0 takes bytes<u32>[3] (give "a" and "b" sizes and rates that make equal tokens (first dimension / rate))',
    ]);
  });

  it('inconsistent rates in one instance of a composite used twice say the def is shared, not only to change it', () => {
    const stage = {
      params: { R: 1 },
      inputs: [
        {
          name: 'in',
          to: [
            { node: 'a', port: 'in0' },
            { node: 'b', port: 'in0' },
          ],
        },
      ],
      outputs: [{ name: 'out', from: { node: 'j', port: 'out0' } }],
      nodes: [work('a', 1, 1, { out0: 'R' }), work('b', 1, 1), work('j', 2, 1)],
      edges: [edge('a.out0', 'j.in0'), edge('b.out0', 'j.in1')],
    };
    const d = document(
      [work('p', 0, 1), { id: 's1', composite: 'stage' }, { id: 's2', composite: 'stage', params: { R: 2 } }, work('c', 1, 0)],
      [edge('p.out0', 's1.in'), edge('s1.out', 's2.in'), edge('s2.out', 'c.in0')],
      { p: 'cpu@h0', s1: 'cpu@h0', s2: 'cpu@h0', c: 'cpu@h0' },
    );
    const [e] = analyze({ ...d, defs: { stage } }).diagnostics.map(formatDiagnostic);
    expect(e).toMatch(/rates are inconsistent around/);
    expect(e).toContain(
      "(defs.stage is written once for its instances s1, s2: a rate written there changes each of them; to change one, write the rate as a param of defs.stage and set it in that instance's params)",
    );
  });

  it("inconsistent rates name the cycle's edges as written, the ratio going round and rates that would fix it", () => {
    const d = document(
      [work('a', 1, 1, { out0: 2, in0: 3 }), work('b', 1, 1), work('c', 1, 1)],
      [edge('a.out0', 'b.in0'), edge('b.out0', 'c.in0'), edge('c.out0', 'a.in0', { delay: 1 })],
    );
    expect(expand(d).diagnostics).toEqual([
      "app.edges[1]: rates are inconsistent around a -> b -> c -> a (app.edges[0], app.edges[1], app.edges[2]): going round, a fires 2/3 times per firing of a (set a's rate on out0 to 3 (now 2), or a's rate on in0 to 2 (now 3); or change the rates so that going round, a node fires once per firing of itself)",
    ]);
  });

  it('inconsistent rates on two paths that meet (no directed cycle), and on a node feeding itself', () => {
    const diamond = document(
      [work('A', 0, 2), work('B', 1, 1, { out0: 2 }), work('C', 1, 1), work('D', 2, 0)],
      [edge('A.out0', 'B.in0'), edge('A.out1', 'C.in0'), edge('B.out0', 'D.in0'), edge('C.out0', 'D.in1')],
    );
    expect(expand(diamond).diagnostics).toEqual([
      "app.edges[3]: rates are inconsistent around A -> C -> D <- B <- A (app.edges[1], app.edges[3], app.edges[2], app.edges[0]): going round, A fires 1/2 times per firing of A (set A's rate on out1 to 2 (now 1), or C's rate on out0 to 2 (now 1); or change the rates so that going round, a node fires once per firing of itself)",
    ]);
    const self = document([work('s', 1, 1, { out0: 2 })], [edge('s.out0', 's.in0', { delay: 2 })]);
    expect(expand(self).diagnostics).toEqual([
      "app.edges[0]: rates are inconsistent around s -> s (app.edges[0]): going round, s fires 2 times per firing of s (set s's rate on in0 to 2 (now 1), or s's rate on out0 to 1 (now 2); or change the rates so that going round, a node fires once per firing of itself)",
    ]);
  });

  it('a repetition above 1,000,000 names the node', () => {
    const big = (id: string, i: number, o: number) => work(id, i, o, o ? { out0: 1000 } : undefined, 1000);
    const { diagnostics } = expand(
      document([big('a', 0, 1), big('b', 1, 1), big('c', 1, 1), big('d', 1, 0)], [edge('a.out0', 'b.in0'), edge('b.out0', 'c.in0'), edge('c.out0', 'd.in0')]),
    );
    expect(diagnostics).toEqual([
      'app.nodes[3]: node "d" would fire 1000000000 times per iteration, more than 1,000,000 (the rates of a chain multiply: check the rates on the edges leading to it, and make producer and consumer rates closer)',
    ]);
  });

  it('an expansion with too many edges is refused before it is built', () => {
    const R = 900_000;
    const { diagnostics } = expand(
      document([work('a', 0, 1, { out0: R }, R), work('b', 3, 0, undefined, 1)], [edge('a.out0', 'b.in0'), edge('a.out0', 'b.in1'), edge('a.out0', 'b.in2')]),
    );
    expect(diagnostics).toEqual([
      'app.edges: the expanded graph would have up to 2700006 edges, more than 2,000,000 (lower the rates of the nodes that fire most, or feed fewer inputs from them)',
    ]);
  });

  it('a mapping entry for a firing that does not exist names the firings that do', () => {
    const d = document([work('A', 0, 1, { out0: 8 }, 16), work('B', 1, 0, undefined, 2)], [edge('A.out0', 'B.in0')], {
      A: 'cpu@h0',
      B: 'cpu@h0',
      'B#9': 'gpu0@h0',
      'A#1': 'gpu0@h0',
    });
    expect(expand(d).diagnostics).toEqual([
      'mapping.B#9: node "B" fires 8 times per iteration: its firings are B#0 .. B#7 (map one of those, or "B" for every firing)',
      'mapping.A#1: node "A" fires once per iteration: it has no firing 1 (map it as "A")',
    ]);
  });

  it('the whole pipeline: a bad rate stops lowering, and analyze reports it', () => {
    const d = document([work('a', 0, 1, { out0: 0 }), work('b', 1, 0)], [edge('a.out0', 'b.in0')]);
    expect(analyze(d).diagnostics.map(formatDiagnostic)).toEqual([expect.stringMatching(/^app\.nodes\[0\]\.rates\.out0: rate 0/)]);
  });
});

// Random consistent SDF graphs: a repetition vector first, rates from it (so every edge balances),
// some outputs feeding several inputs (broadcast), some edges back (cycles) and random delays.
const sdfGraph = fc
  .record({
    q: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 7 }),
    scale: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 7, maxLength: 7 }),
    edges: fc.array(fc.record({ from: fc.nat(), out: fc.nat({ max: 1 }), to: fc.nat(), delay: fc.oneof(fc.constant(0), fc.nat({ max: 40 })) }), {
      maxLength: 12,
    }),
  })
  .map(({ q, scale, edges }) => {
    const n = q.length;
    const lcm = q.reduce((a, b) => (a * b) / gcd(a, b), 1);
    // Output k of node i carries scale * lcm tokens per iteration; each input gets its own port.
    const outRate = (i: number, k: number) => (scale[(i + k) % scale.length] * lcm) / q[i];
    const ins: number[] = new Array(n).fill(0);
    const list = edges.map((e) => {
      const from = e.from % n;
      const to = e.to % n;
      const port = ins[to]++;
      return { from, out: e.out, to, port, delay: e.delay, tokens: outRate(from, e.out) * q[from] };
    });
    const nodes = q.map((_, i) => {
      const rates: Record<string, number> = { out0: outRate(i, 0), out1: outRate(i, 1) };
      list.forEach((e) => {
        if (e.to === i) rates[`in${e.port}`] = e.tokens / q[i];
      });
      // Each port's data: enough words for any rate here to split it.
      return work(`n${i}`, ins[i], 2, rates, 720);
    });
    const appEdges = list.map((e) => edge(`n${e.from}.out${e.out}`, `n${e.to}.in${e.port}`, e.delay ? { delay: e.delay, init: { value: e.delay } } : {}));
    return { q, doc: document(nodes, appEdges) };
  });

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

describe('expansion to single rate (property)', () => {
  it('every (consumer firing, input, token) is fed by exactly one (producer firing, output, token, iteration back), at the stream position the delay gives', () => {
    fc.assert(
      fc.property(sdfGraph, ({ q, doc }) => {
        const { doc: low, repetitions, edgePaths, nodePaths, diagnostics } = expand(doc);
        expect(diagnostics).toEqual([]);
        // The repetition vector balances every edge, is the generator's up to a factor per
        // component, and is the smallest one: the gcd over each component is 1.
        const rate = (id: string, port: string) => Number(doc.app.nodes.find((n) => n.id === id)!.rates![port]);
        for (const e of doc.app.edges)
          expect(repetitions![e.from.node] * rate(e.from.node, e.from.port)).toBe(repetitions![e.to.node] * rate(e.to.node, e.to.port));
        for (const e of doc.app.edges)
          expect(repetitions![e.from.node] * q[Number(e.to.node.slice(1))]).toBe(repetitions![e.to.node] * q[Number(e.from.node.slice(1))]);
        for (const component of components(doc)) expect(component.map((id) => repetitions![id]).reduce(gcd, 0)).toBe(1);

        // Firings: X#0..X#(q-1), or X alone; each lowered node keeps the path of its node.
        const firings = new Map<string, { node: string; index: number }>();
        low!.app.nodes.forEach((n, i) => {
          const of = repetitions![n.firing?.node ?? n.id];
          if (of === 1) expect(n.firing).toBeUndefined();
          else expect(n.firing).toEqual({ node: n.id.split('#')[0], index: Number(n.id.split('#')[1]), of });
          firings.set(n.id, { node: n.firing?.node ?? n.id, index: n.firing?.index ?? 0 });
          expect(nodePaths![i]).toBe(`app.nodes[${doc.app.nodes.findIndex((x) => x.id === (n.firing?.node ?? n.id))}]`);
        });
        expect(firings.size).toBe(doc.app.nodes.reduce((s, n) => s + repetitions![n.id], 0));

        // Every consumer token once, from the producer token the stream gives.
        const fed = new Map<string, string>();
        low!.app.edges.forEach((e, i) => {
          const k = Number(edgePaths![i].match(/\d+/)![0]);
          const orig = doc.app.edges[k];
          const prod = firings.get(e.from.node)!;
          const cons = firings.get(e.to.node)!;
          expect([prod.node, e.from.port, cons.node, e.to.port]).toEqual([orig.from.node, orig.from.port, orig.to.node, orig.to.port]);
          const p = rate(orig.from.node, orig.from.port);
          const c = rate(orig.to.node, orig.to.port);
          const T = repetitions![orig.from.node] * p;
          const from = e.fromTokens ?? { first: 0, count: p, of: p };
          const to = e.toTokens ?? { first: 0, count: c, of: c };
          expect([from.of, to.of, from.count]).toEqual([p, c, to.count]);
          if (!e.fromTokens) expect(from.count === p && from.count === c).toBe(true);
          const back = Number(e.delay ?? 0);
          expect(e.init).toEqual(back > 0 ? orig.init : undefined);
          for (let t = 0; t < to.count; t++) {
            const u = cons.index * c + to.first + t;
            const key = `${k}:${u}`;
            expect(fed.has(key)).toBe(false);
            // Producer stream token of iteration k = 0: -back * T + its position in its iteration.
            const produced = -back * T + prod.index * p + from.first + t;
            expect(produced).toBe(u - Number(orig.delay ?? 0));
            fed.set(key, `${e.from.node}.${from.first + t}`);
          }
        });
        doc.app.edges.forEach((e, k) => {
          const T = repetitions![e.to.node] * rate(e.to.node, e.to.port);
          for (let u = 0; u < T; u++) expect(fed.has(`${k}:${u}`)).toBe(true);
        });
        expect(fed.size).toBe(doc.app.edges.reduce((s, e) => s + repetitions![e.to.node] * rate(e.to.node, e.to.port), 0));
      }),
      { numRuns: 300 },
    );
  });
});

describe('sdfDocument (random SDF documents for compile and simulate)', () => {
  it('lowers clean to its repetition vector; both ends of every lowered edge hold tokens of one size; every cycle carries a delay', () => {
    for (let seed = 0; seed < 120; seed++) {
      const { doc, q } = sdfDocument(seed, { nodes: 2 + (seed % 9), hosts: 1 + (seed % 2), maxGpus: 1, overlap: seed % 2 === 0, delays: seed % 3 !== 0 });
      const { lowered, diagnostics } = lowerDocument(doc);
      expect(diagnostics, `seed ${seed}`).toEqual([]);
      expect(Object.values(lowered!.repetitions)).toEqual(q);
      const byId = new Map(lowered!.doc.app.nodes.map((n) => [n.id, n]));
      const tokenBytes = (id: string, port: string) =>
        Number(byId.get(id)!.params!.bytes) / (byId.get(id)!.rates?.[port] === undefined ? 1 : Number(byId.get(id)!.rates![port]));
      for (const e of lowered!.doc.app.edges) expect(tokenBytes(e.from.node, e.from.port), `seed ${seed}: ${ends(e)}`).toBe(tokenBytes(e.to.node, e.to.port));
      // Kahn's algorithm over the edges without delay: the firings' graph within an iteration is acyclic.
      const within = lowered!.doc.app.edges.filter((e) => !e.delay);
      const indegree = new Map([...byId.keys()].map((id) => [id, 0]));
      for (const e of within) indegree.set(e.to.node, indegree.get(e.to.node)! + 1);
      const ready = [...indegree].filter(([, d]) => d === 0).map(([id]) => id);
      let seen = 0;
      while (ready.length) {
        const id = ready.pop()!;
        seen++;
        for (const e of within) if (e.from.node === id && indegree.set(e.to.node, indegree.get(e.to.node)! - 1).get(e.to.node) === 0) ready.push(e.to.node);
      }
      expect(seen, `seed ${seed}`).toBe(byId.size);
    }
  });
});

/** Node ids by connected component (edges taken both ways). */
function components(doc: ProjectDocument): string[][] {
  const parent = new Map(doc.app.nodes.map((n) => [n.id, n.id]));
  const find = (x: string): string => (parent.get(x) === x ? x : find(parent.get(x)!));
  for (const e of doc.app.edges) parent.set(find(e.from.node), find(e.to.node));
  const groups = new Map<string, string[]>();
  for (const n of doc.app.nodes) groups.set(find(n.id), [...(groups.get(find(n.id)) ?? []), n.id]);
  return [...groups.values()];
}
