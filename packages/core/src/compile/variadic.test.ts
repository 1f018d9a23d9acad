import fc from 'fast-check';
import { defineKernelSpec, findKernel, registerKernels, type DataType, type Params } from '@pipeloom/kernels/specs';
import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { simulate } from './simulate.js';
import { type AppEdge, type AppNode, type ProjectDocument, SYNC_MODES } from '../document/types.js';
import { randomDocument } from '../testing/generate.js';
import { mulberry32, randomInt } from '../util/random.js';

// Kernels of any arity, each port its own type: a variadic test kernel whose port counts and
// per-port sizes are params, through validate, compile and simulate in both sync modes.

const sizeAt = (list: unknown, i: number) => Number(String(list).split(',')[i] ?? 1) || 1;
// Odd sizes are f32, even ones u32: an edge only type-checks when both ends agree on both.
const typeOf = (list: unknown, i: number): DataType => ({ kind: 'test', element: sizeAt(list, i) % 2 ? 'f32' : 'u32', shape: [sizeAt(list, i)] });

const MULTI = 'test.multi';
if (!findKernel(MULTI)) {
  registerKernels(
    [
      defineKernelSpec({
        id: MULTI,
        version: '1.0.0',
        description: 'Any number of inputs and outputs, each of its own size (property tests).',
        params: {
          inputs: { type: 'int', default: 1, min: 0, max: 8, description: 'input ports' },
          outputs: { type: 'int', default: 1, min: 0, max: 8, description: 'output ports' },
          in_sizes: { type: 'string', default: '', description: 'elements of each input, comma-separated' },
          out_sizes: { type: 'string', default: '', description: 'elements of each output, comma-separated' },
        },
        inputs: [{ name: 'in', repeat: 'inputs', type: (p: Params, i = 0) => typeOf(p.in_sizes, i) }],
        outputs: [{ name: 'out', repeat: 'outputs', type: (p: Params, i = 0) => typeOf(p.out_sizes, i) }],
        cost: (p) => ({ flops: 10, bytes: 4 * (Number(p.inputs) + Number(p.outputs)) }),
      }),
    ],
    'variadic.test.ts',
  );
}

/** A random DAG of test.multi nodes (0..4 outputs, 0..5 inputs fed from any earlier output) on randomDocument's cluster. */
function variadicDocument(seed: number, o: { nodes: number; hosts: number; maxGpus: number; overlap: boolean }): ProjectDocument {
  const doc = randomDocument(seed, o);
  const rand = mulberry32(seed ^ 0x5bd1e995);
  const nodes: AppNode[] = [];
  const edges: AppEdge[] = [];
  const outputs: { node: string; port: string; size: number }[] = [];
  for (let i = 0; i < o.nodes; i++) {
    const id = `v${i}`;
    const inSizes: number[] = [];
    const nIn = outputs.length ? randomInt(rand, 0, 5) : 0;
    for (let j = 0; j < nIn; j++) {
      const from = outputs[randomInt(rand, 0, outputs.length - 1)];
      edges.push({ from: { node: from.node, port: from.port }, to: { node: id, port: `in${j}` } });
      inSizes.push(from.size);
    }
    const outSizes = Array.from({ length: randomInt(rand, i === 0 ? 1 : 0, 4) }, () => randomInt(rand, 1, 6));
    outSizes.forEach((size, j) => outputs.push({ node: id, port: `out${j}`, size }));
    nodes.push({ id, kernel: MULTI, params: { inputs: nIn, outputs: outSizes.length, in_sizes: inSizes.join(','), out_sizes: outSizes.join(',') } });
  }
  const pes = [...new Set(Object.values(doc.mapping))];
  const mapping: Record<string, string> = {};
  for (const n of nodes) mapping[n.id] = pes[randomInt(rand, 0, pes.length - 1)];
  return { ...doc, app: { nodes, edges }, mapping };
}

describe('kernels of any arity through compile and simulate', () => {
  it('random port counts and per-port types compile, and every firing reads iteration k - L on every port, both sync modes', () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          nodes: fc.integer({ min: 1, max: 12 }),
          hosts: fc.integer({ min: 1, max: 3 }),
          maxGpus: fc.integer({ min: 0, max: 2 }),
          overlap: fc.boolean(),
        }),
        (p) => {
          const doc = variadicDocument(p.seed, p);
          const r = compile(doc);
          if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
          // Every edge became a buffer of its own output's size and element.
          for (const n of doc.app.nodes) expect(r.ig.order).toContain(n.id);
          for (const sync of SYNC_MODES) {
            const sim = simulate(r.ig, 4, { sync, seed: p.seed });
            expect(sim.violations, sync).toEqual([]);
            for (const n of r.ig.order) expect(sim.fires[n], `${sync} ${n}`).toBe(4);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a node gets exactly the ports its params give: in0..in2 for inputs 3, and names the port that is not there', () => {
    const doc = variadicDocument(1, { nodes: 3, hosts: 1, maxGpus: 0, overlap: false });
    doc.app.nodes = [
      { id: 'a', kernel: MULTI, params: { inputs: 0, outputs: 2, out_sizes: '3,4' } },
      { id: 'b', kernel: MULTI, params: { inputs: 3, outputs: 0, in_sizes: '3,4,3' } },
    ];
    doc.app.edges = [
      { from: { node: 'a', port: 'out0' }, to: { node: 'b', port: 'in0' } },
      { from: { node: 'a', port: 'out1' }, to: { node: 'b', port: 'in1' } },
      { from: { node: 'a', port: 'out0' }, to: { node: 'b', port: 'in2' } },
    ];
    const pe = Object.values(doc.mapping)[0];
    doc.mapping = { a: pe, b: pe };
    expect(compile(doc).ok).toBe(true);
    doc.app.edges.push({ from: { node: 'a', port: 'out1' }, to: { node: 'b', port: 'in3' } });
    const r = compile(doc);
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map((d) => `${d.path}: ${d.message} (${d.hint})`)).toContain(
      'app.edges[3].to.port: node "b" (test.multi) has no input port "in3" (inputs: in0, in1, in2)',
    );
  });
});

describe('generic.work, the stand-in kernel', () => {
  it('compiles and predicts like a real kernel: its bytes size the buffers, its flops the firing time', async () => {
    const { readFileSync } = await import('node:fs');
    const { predict } = await import('../predict/predict.js');
    const doc = JSON.parse(readFileSync(new URL('../../../../examples/generic-work.json', import.meta.url), 'utf8')) as ProjectDocument;
    const r = compile(doc);
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    expect(new Set(Array.from(r.ig.buffers.bytes))).toEqual(new Set([1048576]));
    const slow = predict(doc);
    const faster = predict({
      ...doc,
      app: { ...doc.app, nodes: doc.app.nodes.map((n) => (n.id === 'left' ? { ...n, params: { ...n.params, flops: 1e9 } } : n)) },
    });
    if (!slow.ok || !faster.ok) throw new Error('does not predict');
    expect(faster.prediction.overlap!.cycleTime).toBeLessThan(slow.prediction.overlap!.cycleTime);
  });
});
