import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, Params } from '../types.js';

// The multi-host benchmark's kernels as data (ports, params, cost hints); how they run is in
// index.ts. Nothing here loads WGSL: core reads these through '@pipeloom/kernels/specs'.

/** The Fig 13 increment: sum of 1/i^2 for i in 2..nb_loop+2 in f32, rounded (0 up to nb_loop 4, 1 from 5). */
export function increment(nbLoop: number): number {
  let one = Math.fround(0);
  for (let i = 2; i < nbLoop + 3; i++) {
    const r = Math.fround(1 / i);
    one = Math.fround(one + Math.fround(r * r));
  }
  return Math.trunc(Math.fround(one + 0.5));
}

const matrixType = (p: Params): DataType => ({ kind: 'matrix', element: 'f32', shape: [Number(p.height), Number(p.width)] });
export const count = (p: Params) => Number(p.width) * Number(p.height);

const sizeParams = {
  width: { type: 'int', default: 1024, min: 1, max: 16384, unit: 'elements', description: 'Matrix width' },
  height: { type: 'int', default: 1024, min: 1, max: 16384, unit: 'elements', description: 'Matrix height' },
} as const;

export const matrixSpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'matrix.produce',
    title: 'Produce matrix',
    category: 'Multi-host benchmark',
    description: 'Fills a width x height f32 matrix with the iteration number (exact up to 2^24; the consumer refuses to check beyond).',
    params: { ...sizeParams },
    inputs: [],
    outputs: [{ name: 'out', type: matrixType }],
    cost: (p) => ({ flops: 0, bytes: count(p) * 4 }),
    values: () => ({ out: { scale: 1, offset: 0 } }),
  },
  {
    id: 'matrix.increment',
    title: 'Increment matrix',
    category: 'Multi-host benchmark',
    description: 'The Fig 13 kernel: out = in + round(sum 1/i^2, i = 2..nb_loop+2), i.e. +0 for nb_loop <= 4, +1 from 5.',
    params: {
      ...sizeParams,
      nb_loop: { type: 'int', default: 5, min: 0, max: 100000, unit: 'loops', description: 'Length of the series; sets the compute load' },
    },
    inputs: [{ name: 'in', type: matrixType }],
    outputs: [{ name: 'out', type: matrixType }],
    cost: (p) => ({ flops: count(p) * (3 * (Number(p.nb_loop) + 1) + 1), bytes: count(p) * 8 }),
    values: (p, { in: v }) => ({ out: v && { scale: v.scale, offset: v.offset + increment(Number(p.nb_loop)) } }),
  },
  {
    id: 'matrix.consume',
    title: 'Consume matrix',
    category: 'Multi-host benchmark',
    description:
      'Checks every element equals scale x iteration + the Fig 13 increments of the incrementers upstream (+ expected_offset); a mismatch reports the iteration, first bad index and value. ' +
      'Left unset (increments, expected_offset, scale, running_sum), the expectation is derived from the graph upstream, joins included (matrix.add of two streams: scale 2); ' +
      'running_sum d checks an accumulator fed back with delay d (set by hand, never derived).',
    params: {
      ...sizeParams,
      increments: {
        type: 'string',
        default: '',
        description: 'Comma-separated nb_loop of each incrementer upstream, e.g. "100,100"; each adds increment(nb_loop) (0 for nb_loop <= 4, else 1)',
      },
      expected_offset: {
        type: 'float',
        default: 0,
        unit: '',
        description: 'Constant added on top of the increments (kept for documents that state the sum directly)',
      },
      scale: { type: 'float', default: 1, description: 'Expected iterations per element: 2 after a matrix.add of two produced streams' },
      running_sum: {
        type: 'int',
        default: 0,
        min: 0,
        max: 1_000_000,
        unit: 'iterations',
        description:
          '0: off. d >= 1: the input accumulates over a feedback loop with delay d — element = sum over i = k, k-d, k-2d, ... >= 0 of what the other params expect at iteration i',
      },
    },
    inputs: [{ name: 'in', type: matrixType }],
    outputs: [],
    cost: (p) => ({ flops: count(p), bytes: count(p) * 4 }),
    // running_sum is part of the expectation but never derived: a document that sets it states
    // the whole expectation by hand (the graph walk cannot see what a feedback loop accumulates).
    expects: {
      params: ['increments', 'expected_offset', 'scale', 'running_sum'],
      derive: ({ in: v }) => v && { increments: '', expected_offset: v.offset, scale: v.scale },
    },
  },
  {
    id: 'matrix.add',
    title: 'Add matrices',
    category: 'Matrix',
    description: 'Element-wise sum of two matrices: out = a + b.',
    params: { ...sizeParams },
    inputs: [
      { name: 'a', type: matrixType },
      { name: 'b', type: matrixType },
    ],
    outputs: [{ name: 'out', type: matrixType }],
    cost: (p) => ({ flops: count(p), bytes: count(p) * 12 }),
    values: (_, { a, b }) => ({ out: a && b && { scale: a.scale + b.scale, offset: a.offset + b.offset } }),
  },
]);
