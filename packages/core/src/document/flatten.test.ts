import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { formatDiagnostic, type Diagnostic } from '../diagnostics.js';
import { flattenComposites, MAX_FLAT_NODES } from './flatten.js';
import { lowerDocument } from './lower.js';
import type { AppNode, CompositeDef, ProjectDocument } from './types.js';
import { analyze } from './validate.js';

const example = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../../examples/composite.json', import.meta.url), 'utf8'));

/** examples/composite.json flattened by hand: what the flatten step must amount to. */
function handFlattened(): ProjectDocument {
  const size = { width: 512, height: 512 };
  const stage = (id: string, L: number): AppNode[] => [
    { id: `${id}/inc`, kernel: 'matrix.increment', params: { ...size, nb_loop: L } },
    { id: `${id}/add`, kernel: 'matrix.add', params: { ...size } },
  ];
  const e = (from: string, fp: string, to: string, tp: string) => ({ from: { node: from, port: fp }, to: { node: to, port: tp } });
  const d = example();
  return {
    format: 'pipeloom/v2',
    name: d.name,
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: { ...size } },
        ...stage('s1', 2),
        ...stage('s2', 3),
        { id: 'C', kernel: 'matrix.consume', params: { ...size } },
      ],
      edges: [
        e('P', 'out', 's1/inc', 'in'),
        e('P', 'out', 's1/add', 'b'),
        e('s1/inc', 'out', 's1/add', 'a'),
        e('s1/add', 'out', 's2/inc', 'in'),
        e('s1/add', 'out', 's2/add', 'b'),
        e('s2/inc', 'out', 's2/add', 'a'),
        e('s2/add', 'out', 'C', 'in'),
      ],
    },
    arch: d.arch,
    mapping: { P: 'cpu@h0', 's1/inc': 'gpu0@h0', 's1/add': 'gpu0@h0', 's2/inc': 'gpu0@h1', 's2/add': 'cpu@h1', C: 'cpu@h1' },
    options: d.options,
  };
}

/** A small document: src -> [composite node(s)] -> sink, everything on one CPU. */
function doc(nodes: AppNode[], edges: [string, string][], defs?: Record<string, CompositeDef>, params?: ProjectDocument['params']): ProjectDocument {
  const size = { width: 8, height: 8 };
  return {
    format: 'pipeloom/v2',
    name: 'flatten',
    params,
    defs,
    app: {
      nodes: [{ id: 'src', kernel: 'matrix.produce', params: size }, ...nodes, { id: 'sink', kernel: 'matrix.consume', params: size }],
      edges: edges.map(([a, b]) => {
        const [fn, fp] = a.split('.');
        const [tn, tp] = b.split('.');
        return { from: { node: fn, port: fp }, to: { node: tn, port: tp } };
      }),
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }], pes: [], links: [] },
    mapping: Object.fromEntries(['src', 'sink', ...nodes.map((n) => n.id)].map((id) => [id, 'cpu@h0'])),
    options: { overlap: false, iterations: 2 },
  };
}

/** One incrementer behind an input and an output. */
const inc = (params: Record<string, number | string> = { width: 8, height: 8 }): CompositeDef => ({
  inputs: [{ name: 'in', to: [{ node: 'i', port: 'in' }] }],
  outputs: [{ name: 'out', from: { node: 'i', port: 'out' } }],
  nodes: [{ id: 'i', kernel: 'matrix.increment', params }],
  edges: [],
});

const problems = (d: unknown) => analyze(d).diagnostics.map(formatDiagnostic);

describe('flattening composites', () => {
  it('a composite used twice via defs compiles to the same implementation graph as the document flattened by hand', () => {
    for (const overlap of [true, false]) {
      const a = compile(example(), { overlap });
      const b = compile(handFlattened(), { overlap });
      expect(a.diagnostics).toEqual([]);
      expect(b.diagnostics).toEqual([]);
      if (a.ok && b.ok) expect(a.ig).toEqual(b.ig);
    }
  });

  it('names inner nodes outer/inner and keeps the paths where they are written', () => {
    const out: Diagnostic[] = [];
    const flat = flattenComposites(example(), out)!;
    expect(out).toEqual([]);
    expect(flat.doc.app.nodes.map((n, i) => `${n.id} ${flat.nodePaths[i]}`)).toEqual([
      'P app.nodes[0]',
      's1/inc defs.stage.nodes[0]',
      's1/add defs.stage.nodes[1]',
      's2/inc defs.stage.nodes[0]',
      's2/add defs.stage.nodes[1]',
      'C app.nodes[3]',
    ]);
    // An input bound to two inner inputs: one edge each, named by its binding.
    expect(flat.doc.app.edges.map((e, i) => `${e.from.node}.${e.from.port} -> ${e.to.node}.${e.to.port} ${flat.edgePaths[i]}`)).toEqual([
      's1/inc.out -> s1/add.a defs.stage.edges[0]',
      's2/inc.out -> s2/add.a defs.stage.edges[0]',
      'P.out -> s1/inc.in defs.stage.inputs[0].to[0]',
      'P.out -> s1/add.b defs.stage.inputs[0].to[1]',
      's1/add.out -> s2/inc.in defs.stage.inputs[0].to[0]',
      's1/add.out -> s2/add.b defs.stage.inputs[0].to[1]',
      's2/add.out -> C.in app.edges[2]',
    ]);
    expect(flat.doc.defs).toBeUndefined();
  });

  it("reads an instance's params in the scope around it, the def's defaults in its own, the document's behind both", () => {
    const stage: CompositeDef = { ...inc({ width: 'W', height: 'W', nb_loop: 'L * K' }), params: { L: 1, K: '10 * L' } };
    const d = doc(
      [
        { id: 'x', composite: 'stage' },
        { id: 'y', composite: 'stage', params: { L: 'L' } },
      ],
      [
        ['src.out', 'x.in'],
        ['x.out', 'y.in'],
        ['y.out', 'sink.in'],
      ],
      { stage },
      { W: 8, L: 3 },
    );
    const { lowered, diagnostics } = lowerDocument(d);
    expect(diagnostics).toEqual([]);
    // x: L = 1, K = 10; y: L = the document's L (3), K = 30.
    expect(lowered!.doc.app.nodes.map((n) => [n.id, n.params?.nb_loop])).toEqual([
      ['src', undefined],
      ['x/i', 10],
      ['y/i', 90],
      ['sink', undefined],
    ]);
  });

  it('flattens inline graphs at any depth, reading the params of the graphs around them', () => {
    const level3: CompositeDef = { params: { Z: 'Y + 1' }, ...inc({ width: 8, height: 8, nb_loop: 'X + Y + Z' }) };
    const level2: CompositeDef = {
      params: { Y: 'X * 10' },
      inputs: [{ name: 'in', to: [{ node: 'c', port: 'in' }] }],
      outputs: [{ name: 'out', from: { node: 'c', port: 'out' } }],
      nodes: [{ id: 'c', graph: level3 }],
      edges: [],
    };
    const level1: CompositeDef = {
      params: { X: 2 },
      inputs: [{ name: 'in', to: [{ node: 'b', port: 'in' }] }],
      outputs: [{ name: 'out', from: { node: 'b', port: 'out' } }],
      nodes: [{ id: 'b', graph: level2 }],
      edges: [],
    };
    const d = doc(
      [{ id: 'a', graph: level1 }],
      [
        ['src.out', 'a.in'],
        ['a.out', 'sink.in'],
      ],
    );
    d.mapping = { src: 'cpu@h0', sink: 'cpu@h0', a: 'cpu@h0' };
    const { lowered, diagnostics } = lowerDocument(d);
    expect(diagnostics).toEqual([]);
    const n = lowered!.doc.app.nodes[1];
    expect([n.id, n.params?.nb_loop, lowered!.nodePaths[1]]).toEqual(['a/b/c/i', 2 + 20 + 21, 'app.nodes[1].graph.nodes[0].graph.nodes[0].graph.nodes[0]']);
    expect(lowered!.doc.mapping).toEqual({ src: 'cpu@h0', sink: 'cpu@h0', 'a/b/c/i': 'cpu@h0' });
  });

  it('maps a whole composite, inner nodes named themselves first, the nearest composite next', () => {
    const pair: CompositeDef = {
      inputs: [{ name: 'in', to: [{ node: 'p', port: 'in' }] }],
      outputs: [{ name: 'out', from: { node: 'q', port: 'out' } }],
      nodes: [
        { id: 'p', composite: 'one' },
        { id: 'q', composite: 'one' },
      ],
      edges: [{ from: { node: 'p', port: 'out' }, to: { node: 'q', port: 'in' } }],
    };
    const d = doc(
      [{ id: 'a', composite: 'pair' }],
      [
        ['src.out', 'a.in'],
        ['a.out', 'sink.in'],
      ],
      { pair, one: inc() },
    );
    d.arch.hosts = [{ id: 'h0', cpus: 1, gpus: 2 }];
    d.mapping = { src: 'cpu@h0', sink: 'cpu@h0', a: 'gpu0@h0', 'a/q': 'gpu1@h0', 'a/p/i': 'cpu@h0' };
    const { lowered, diagnostics } = lowerDocument(d);
    expect(diagnostics).toEqual([]);
    expect(lowered!.doc.mapping).toEqual({ src: 'cpu@h0', sink: 'cpu@h0', 'a/p/i': 'cpu@h0', 'a/q/i': 'gpu1@h0' });
    // An entry naming no node is still reported.
    d.mapping['a/r'] = 'cpu@h0';
    expect(problems(d)).toEqual(['mapping.a/r: node "a/r" does not exist (remove this entry or add the node to app.nodes)']);
  });

  it('evaluates delays in their scope and renames init nodes with the composite', () => {
    const def: CompositeDef = {
      params: { D: 2 },
      inputs: [{ name: 'in', to: [{ node: 'i', port: 'in' }] }],
      outputs: [{ name: 'out', from: { node: 'i', port: 'out' } }],
      nodes: [
        { id: 'i', kernel: 'matrix.add', params: { width: 8, height: 8 } },
        { id: 'zero', kernel: 'matrix.produce', params: { width: 8, height: 8 } },
      ],
      edges: [{ from: { node: 'i', port: 'out' }, to: { node: 'i', port: 'b' }, delay: 'D - 1', init: { node: 'zero' } }],
    };
    def.inputs![0].to[0].port = 'a';
    const d = doc(
      [{ id: 'x', composite: 'c' }],
      [
        ['src.out', 'x.in'],
        ['x.out', 'sink.in'],
      ],
      { c: def },
    );
    d.app.edges[1].delay = 'K * 3';
    d.params = { K: 1 };
    const out: Diagnostic[] = [];
    const flat = flattenComposites(d, out)!;
    expect(out).toEqual([]);
    expect(flat.doc.app.edges.map((e) => [`${e.from.node} -> ${e.to.node}`, e.delay, e.init])).toEqual([
      ['x/i -> x/i', 1, { node: 'x/zero' }],
      ['src -> x/i', undefined, undefined],
      ['x/i -> sink', 3, undefined],
    ]);
  });
});

describe('composite mistakes', () => {
  const two = (
    def: CompositeDef,
    edges: [string, string][] = [
      ['src.out', 'x.in'],
      ['x.out', 'sink.in'],
    ],
  ) => doc([{ id: 'x', composite: 'c' }], edges, { c: def });

  it('an edge naming a port the composite does not declare', () => {
    expect(
      problems(
        two(inc(), [
          ['src.out', 'x.input'],
          ['x.out', 'sink.in'],
        ]),
      ),
    ).toContain('app.edges[0].to.port: composite node "x" has no input "input" (inputs: in)');
    expect(
      problems(
        two(inc(), [
          ['src.out', 'x.in'],
          ['x.result', 'sink.in'],
        ]),
      ),
    ).toContain('app.edges[1].from.port: composite node "x" has no output "result" (outputs: out)');
  });

  it('an inner input neither bound nor fed, and a composite input not connected', () => {
    const def = inc();
    def.inputs = [];
    expect(problems(two(def, [['x.out', 'sink.in']]))).toEqual([
      'defs.c.nodes[0]: input "in" of node "x/i" is neither bound to an input of defs.c nor fed by an edge of its graph (add { "node": "i", "port": "in" } to an input\'s "to" in defs.c.inputs, or an edge to i.in in defs.c.edges)',
    ]);
    expect(problems(two(inc(), [['x.out', 'sink.in']]))).toEqual(['app.nodes[1]: input "in" of composite node "x" is not connected (add an edge to x.in)']);
  });

  it('an inner input bound twice, or bound and fed', () => {
    const twice = inc();
    twice.inputs = [
      { name: 'in', to: [{ node: 'i', port: 'in' }] },
      { name: 'in2', to: [{ node: 'i', port: 'in' }] },
    ];
    expect(
      problems(
        two(twice, [
          ['src.out', 'x.in'],
          ['src.out', 'x.in2'],
          ['x.out', 'sink.in'],
        ]),
      ),
    ).toEqual([
      'defs.c.inputs[1].to[0]: inner input x/i.in is bound twice (also by defs.c.inputs[0].to[0]) (bind each inner input to one input of the composite)',
    ]);
    const fed: CompositeDef = {
      inputs: [
        {
          name: 'in',
          to: [
            { node: 'i', port: 'in' },
            { node: 'j', port: 'in' },
          ],
        },
      ],
      outputs: [{ name: 'out', from: { node: 'j', port: 'out' } }],
      nodes: [
        { id: 'i', kernel: 'matrix.increment', params: { width: 8, height: 8 } },
        { id: 'j', kernel: 'matrix.increment', params: { width: 8, height: 8 } },
      ],
      edges: [{ from: { node: 'i', port: 'out' }, to: { node: 'j', port: 'in' } }],
    };
    expect(problems(two(fed))).toContain(
      'defs.c.inputs[0].to[1]: inner input x/j.in is bound to an input of defs.c and also fed by defs.c.edges[0] (an input takes one edge: remove the binding or the edge)',
    );
  });

  it('a binding naming an inner node or port that does not exist', () => {
    const node = inc();
    node.inputs = [{ name: 'in', to: [{ node: 'ii', port: 'in' }] }];
    expect(problems(two(node))).toContain(
      'defs.c.inputs[0].to[0].node: input "in" of defs.c is bound to node "ii", which its graph does not have (did you mean "i"?)',
    );
    const port = inc();
    port.outputs = [{ name: 'out', from: { node: 'i', port: 'in' } }];
    expect(problems(two(port))).toContain(
      'defs.c.outputs[0].from.port: output "out" of defs.c is bound to i.in, but matrix.increment has no output "in" (outputs of i: out)',
    );
  });

  it('an input bound to inner inputs of different types: the type mismatch names the binding', () => {
    const def: CompositeDef = {
      inputs: [
        {
          name: 'in',
          to: [
            { node: 'i', port: 'in' },
            { node: 'j', port: 'in' },
          ],
        },
      ],
      outputs: [{ name: 'out', from: { node: 'i', port: 'out' } }],
      nodes: [
        { id: 'i', kernel: 'matrix.increment', params: { width: 8, height: 8 } },
        { id: 'j', kernel: 'matrix.consume', params: { width: 8, height: 4 } },
      ],
      edges: [],
    };
    const m = problems(two(def));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/^defs.c.inputs\[0\].to\[1\]: type mismatch: src.out is matrix<f32>\[8x8\] but x\/j.in expects matrix<f32>\[4x8\]/);
  });

  it('defs recursion, named as a cycle, once', () => {
    const a: CompositeDef = { ...inc(), nodes: [{ id: 'i', composite: 'b' }] };
    const b: CompositeDef = { ...inc(), nodes: [{ id: 'i', composite: 'a' }] };
    expect(
      problems(
        doc(
          [{ id: 'x', composite: 'a' }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { a, b },
        ),
      ),
    ).toEqual([
      'defs.b.nodes[0].composite: defs recursion: defs.a -> defs.b -> defs.a (a composite cannot contain itself, directly or through other composites: break the cycle)',
    ]);
    const self: CompositeDef = { ...inc(), nodes: [{ id: 'i', composite: 's' }] };
    expect(
      problems(
        doc(
          [{ id: 'x', composite: 's' }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { s: self },
        ),
      ),
    ).toEqual([
      'defs.s.nodes[0].composite: defs recursion: defs.s -> defs.s (a composite cannot contain itself, directly or through other composites: break the cycle)',
    ]);
  });

  it('an unknown def, with the nearest name', () => {
    expect(
      problems(
        doc(
          [{ id: 'x', composite: 'stag' }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { stage: inc() },
        ),
      ),
    ).toEqual(['app.nodes[1].composite: node "x": no composite "stag" in defs (did you mean "stage"?)']);
  });

  it('a node with more than one of kernel, composite and graph', () => {
    expect(
      problems(
        doc(
          [{ id: 'x', kernel: 'matrix.increment', composite: 'c' }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { c: inc() },
        ),
      ),
    ).toEqual([
      'app.nodes[1]: has both kernel and composite (a node is a kernel node (kernel), a composite node (composite, or graph inline) or a scan node (type): keep one)',
    ]);
  });

  it('a composite param the def does not declare', () => {
    expect(
      problems(
        doc(
          [{ id: 'x', composite: 'c', params: { LL: 1 } }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { c: { ...inc(), params: { L: 1 } } },
        ),
      ),
    ).toEqual(['app.nodes[1].params.LL: composite node "x" has no param "LL" (did you mean "L"? Params: L)']);
  });

  it('bounds the flattened size: a def doubling itself 20 deep is refused, not built', () => {
    const defs: Record<string, CompositeDef> = { d0: inc() };
    for (let k = 1; k <= 20; k++) {
      defs[`d${k}`] = {
        inputs: [{ name: 'in', to: [{ node: 'a', port: 'in' }] }],
        outputs: [{ name: 'out', from: { node: 'b', port: 'out' } }],
        nodes: [
          { id: 'a', composite: `d${k - 1}` },
          { id: 'b', composite: `d${k - 1}` },
        ],
        edges: [{ from: { node: 'a', port: 'out' }, to: { node: 'b', port: 'in' } }],
      };
    }
    const t = Date.now();
    const m = problems(
      doc(
        [{ id: 'x', composite: 'd20' }],
        [
          ['src.out', 'x.in'],
          ['x.out', 'sink.in'],
        ],
        defs,
      ),
    );
    expect(m).toEqual([`app.nodes: flattening the composites gives ${2 ** 20 + 2} nodes, more than ${MAX_FLAT_NODES} (use fewer or smaller composites)`]);
    expect(Date.now() - t).toBeLessThan(20_000);
  });

  it('never throws on malformed defs', () => {
    const junk = fc.oneof(
      fc.jsonValue(),
      fc.constant({ nodes: [{ id: 'i', graph: { nodes: 'x', edges: [] } }], edges: [] }),
      fc.record({
        inputs: fc.jsonValue(),
        outputs: fc.jsonValue(),
        nodes: fc.array(fc.jsonValue(), { maxLength: 3 }),
        edges: fc.array(fc.jsonValue(), { maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(junk, fc.jsonValue(), (def, params) => {
        const d = doc(
          [{ id: 'x', composite: 'c', params: params as never }],
          [
            ['src.out', 'x.in'],
            ['x.out', 'sink.in'],
          ],
          { c: def as unknown as CompositeDef },
        );
        const r = analyze(d);
        if (!r.model) expect(r.diagnostics.length).toBeGreaterThan(0);
        compile(d);
      }),
      { numRuns: 300 },
    );
  });
});
