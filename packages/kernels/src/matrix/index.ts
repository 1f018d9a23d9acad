import { KernelError, type FiringReport, type Kernel, type Params } from '../types.js';
import { implement } from '../implement.js';
import { count, increment, matrixSpecs } from './spec.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, uniformBuffer } from '../gpu/pipeline.js';
import { checkAgainstExpected, fillWithIteration, mismatch } from '../gpu/fill-and-check.js';

// The paper's multi-host benchmark (Figs 11-13): P fills, I increments (the Fig 13 kernel),
// C checks. Values are f32: iteration numbers are exact up to 2^24 = 16,777,216 iterations,
// beyond which P's fill (and C's expected value) round and C reports a mismatch.

export { increment } from './spec.js';

/** Parses the consumer's `increments` param: comma-separated nb_loop values of the incrementers upstream. */
export function parseIncrements(text: string): number[] {
  const t = text.trim();
  if (t === '') return [];
  return t.split(',').map((s) => {
    const v = Number(s.trim());
    if (!Number.isInteger(v) || v < 0) throw new KernelError('matrix.consume', `param increments: "${s.trim()}" is not a non-negative integer nb_loop`);
    return v;
  });
}

/**
 * The value every element must hold when the consumer receives `iteration` k: scale x k +
 * offset + increments (exact, not rounded); with `running_sum` d >= 1, the sum of that over
 * i = k, k-d, k-2d, ... >= 0 (an accumulator fed back with delay d), in closed form with
 * m = floor(k/d): scale x ((m+1)k - d m(m+1)/2) + (offset + increments)(m+1).
 */
export function expectedValue(params: Params, iteration: number): number {
  const upstream = parseIncrements(String(params.increments ?? '')).reduce((s, n) => s + increment(n), 0);
  const scale = Number(params.scale ?? 1);
  const offset = Number(params.expected_offset ?? 0) + upstream;
  const d = Number(params.running_sum ?? 0);
  if (!(d >= 1)) return scale * iteration + offset;
  const m = Math.floor(iteration / d);
  return scale * ((m + 1) * iteration - (d * m * (m + 1)) / 2) + offset * (m + 1);
}

/** f32 holds every integer up to 2^24 only; past it two iterations can look alike. */
export const F32_EXACT_LIMIT = 2 ** 24;

function beyondLimit(iteration: number, want: number): FiringReport | undefined {
  if (Math.abs(want) <= F32_EXACT_LIMIT && Math.fround(want) === want) return undefined;
  return {
    ok: false,
    message: `iteration ${iteration}: expected value ${want} is not exact in f32 (integers are exact only up to 2^24 = ${F32_EXACT_LIMIT}); run fewer iterations`,
    values: { iteration, expected: want },
  };
}

// The Fig 13 kernel, line for line.
const WGSL_INCREMENT = /* wgsl */ `
struct U { n: u32, nb_loop: i32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> in_: array<f32>;
@group(0) @binding(2) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let index = linear_id(gid, nwg);
  if (index >= u.n) { return; }
  var one = 0.0f;
  for (var i = 2; i < u.nb_loop + 3; i++) {
    one += (1.0f / f32(i)) * (1.0f / f32(i));
  }
  one = f32(i32(one + 0.5f));
  out_[index] = in_[index] + one;
}`;

const WGSL_ADD = /* wgsl */ `
struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.n) { return; }
  out_[i] = a[i] + b[i];
}`;

export const matrixKernels: Kernel[] = implement(matrixSpecs, {
  'matrix.produce': {
    cpu: ({ iteration, outputs }) => {
      (outputs.out as Float32Array).fill(iteration);
    },
    gpu: fillWithIteration('matrix.produce', 'produce', count),
  },
  'matrix.increment': {
    cpu: ({ params, inputs, outputs }) => {
      const one = increment(Number(params.nb_loop));
      const a = inputs.in as Float32Array;
      const b = outputs.out as Float32Array;
      for (let i = 0; i < a.length; i++) b[i] = a[i] + one;
    },
    gpu: {
      wgsl: { increment: WGSL_INCREMENT },
      dispatches: (p) => [linear('increment', count(p))],
      async prepare(device, params) {
        const pipeline = await createPipeline(device, 'matrix.increment', 'increment', WGSL_INCREMENT);
        const n = count(params);
        const uni = uniformBuffer(
          device,
          packWords([
            ['u', n],
            ['i', Number(params.nb_loop)],
          ]),
        );
        return {
          encode(encoder, f) {
            dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.inputs.in, f.outputs.out]), n, 'matrix.increment');
          },
          destroy: () => uni.destroy(),
        };
      },
    },
  },
  'matrix.consume': {
    cpu: ({ params, iteration, inputs }) => {
      const a = inputs.in as Float32Array;
      const want = expectedValue(params, iteration);
      const limit = beyondLimit(iteration, want);
      if (limit) return limit;
      for (let i = 0; i < a.length; i++) if (a[i] !== want) return mismatch(iteration, i, a[i], want);
      return { ok: true };
    },
    gpu: checkAgainstExpected('matrix.consume', { count, expected: expectedValue, refuse: beyondLimit }),
  },
  'matrix.add': {
    cpu: ({ inputs, outputs }) => {
      const a = inputs.a as Float32Array;
      const b = inputs.b as Float32Array;
      const o = outputs.out as Float32Array;
      for (let i = 0; i < o.length; i++) o[i] = a[i] + b[i];
    },
    gpu: {
      wgsl: { add: WGSL_ADD },
      dispatches: (p) => [linear('add', count(p))],
      async prepare(device, params) {
        const pipeline = await createPipeline(device, 'matrix.add', 'add', WGSL_ADD);
        const n = count(params);
        const uni = uniformBuffer(device, packWords([['u', n]]));
        return {
          encode(encoder, f) {
            dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.inputs.a, f.inputs.b, f.outputs.out]), n, 'matrix.add');
          },
          destroy: () => uni.destroy(),
        };
      },
    },
  },
});
