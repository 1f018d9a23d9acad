import type { KernelSpec, Params, DataType } from '../types.js';

// Placeholder-free minimal CPU versions; the kernels package adds WGSL and checks.
const matrixType = (p: Params): DataType => ({ kind: 'matrix', element: 'f32', shape: [Number(p.height), Number(p.width)] });

const sizeParams = {
  width: { type: 'int', default: 1024, min: 1, max: 16384, unit: 'elements', description: 'Matrix width' },
  height: { type: 'int', default: 1024, min: 1, max: 16384, unit: 'elements', description: 'Matrix height' },
} as const;

/** The Fig 13 increment: sum of 1/i^2 for i in 2..nb_loop+2 in f32, rounded. */
export function increment(nbLoop: number): number {
  let one = Math.fround(0);
  for (let i = 2; i < nbLoop + 3; i++) {
    const r = Math.fround(1 / i);
    one = Math.fround(one + Math.fround(r * r));
  }
  return Math.trunc(Math.fround(one + 0.5));
}

export const matrixKernels: KernelSpec[] = [
  {
    id: 'matrix.produce',
    title: 'Produce matrix',
    category: 'Multi-host benchmark',
    description: 'Fills a width x height f32 matrix with the iteration number.',
    params: { ...sizeParams },
    inputs: [],
    outputs: [{ name: 'out', type: matrixType }],
    cost: (p) => ({ flops: 0, bytes: Number(p.width) * Number(p.height) * 4 }),
    cpu: ({ iteration, outputs }) => {
      (outputs.out as Float32Array).fill(iteration);
    },
  },
  {
    id: 'matrix.increment',
    title: 'Increment matrix',
    category: 'Multi-host benchmark',
    description: 'The Fig 13 kernel: out = in + round(sum 1/i^2, i = 2..nb_loop+2).',
    params: {
      ...sizeParams,
      nb_loop: { type: 'int', default: 5, min: 0, max: 100000, unit: 'loops', description: 'Length of the series; sets the compute load' },
    },
    inputs: [{ name: 'in', type: matrixType }],
    outputs: [{ name: 'out', type: matrixType }],
    cost: (p) => ({ flops: Number(p.width) * Number(p.height) * (3 * (Number(p.nb_loop) + 1) + 1), bytes: Number(p.width) * Number(p.height) * 8 }),
    cpu: ({ params, inputs, outputs }) => {
      const one = increment(Number(params.nb_loop));
      const a = inputs.in as Float32Array;
      const b = outputs.out as Float32Array;
      for (let i = 0; i < a.length; i++) b[i] = a[i] + one;
    },
  },
  {
    id: 'matrix.consume',
    title: 'Consume matrix',
    category: 'Multi-host benchmark',
    description: 'Checks every element equals the value expected for the iteration it receives.',
    params: {
      ...sizeParams,
      expected_offset: { type: 'float', default: 0, unit: '', description: 'Value added upstream to the iteration number (sum of increments)' },
    },
    inputs: [{ name: 'in', type: matrixType }],
    outputs: [],
    cost: (p) => ({ flops: 0, bytes: Number(p.width) * Number(p.height) * 4 }),
    cpu: ({ params, iteration, inputs }) => {
      const a = inputs.in as Float32Array;
      const want = iteration + Number(params.expected_offset);
      for (let i = 0; i < a.length; i++) {
        if (a[i] !== want) return { ok: false, message: `iteration ${iteration}: element ${i} is ${a[i]}, expected ${want}` };
      }
      return { ok: true };
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
    cost: (p) => ({ flops: Number(p.width) * Number(p.height), bytes: Number(p.width) * Number(p.height) * 12 }),
    cpu: ({ inputs, outputs }) => {
      const a = inputs.a as Float32Array;
      const b = inputs.b as Float32Array;
      const o = outputs.out as Float32Array;
      for (let i = 0; i < o.length; i++) o[i] = a[i] + b[i];
    },
  },
];
